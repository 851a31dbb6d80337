tree $FIXTURES/snapshots/hostile_errors.jsonl
