groups --json $FIXTURES/snapshots/malformed.jsonl
