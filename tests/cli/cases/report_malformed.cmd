report --no-journal $FIXTURES/snapshots/malformed.jsonl
