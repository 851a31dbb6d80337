decode --format table $FIXTURES/snapshots/hostile_errors.jsonl
