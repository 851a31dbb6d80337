journal --file $FIXTURES/journal/resolved.jsonl
