groups $FIXTURES/snapshots/hostile.jsonl
