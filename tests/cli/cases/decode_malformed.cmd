decode $FIXTURES/snapshots/malformed.jsonl
