decode $FIXTURES/snapshots/hostile_errors.jsonl
