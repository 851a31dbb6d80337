decode $FIXTURES/snapshots/no-such-file.jsonl
