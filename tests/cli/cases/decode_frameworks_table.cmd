decode --format table $FIXTURES/snapshots/frameworks.jsonl
