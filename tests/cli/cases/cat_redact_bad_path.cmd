cat --redact 'body.cards[x]' $FIXTURES/snapshots/secrets.jsonl
