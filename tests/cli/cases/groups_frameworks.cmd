groups $FIXTURES/snapshots/frameworks.jsonl
