replay orders.dlq --snapshot $FIXTURES/snapshots/hostile_errors.jsonl --all --dry-run
