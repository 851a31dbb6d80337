cat $FIXTURES/snapshots/hostile_errors.jsonl
