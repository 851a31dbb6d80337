tree $FIXTURES/snapshots/frameworks.jsonl
