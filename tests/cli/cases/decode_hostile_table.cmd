decode --format table $FIXTURES/snapshots/hostile.jsonl
