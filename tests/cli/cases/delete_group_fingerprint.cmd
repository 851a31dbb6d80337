delete payments.dlq --snapshot $FIXTURES/snapshots/incident.jsonl --dry-run --group 6e3876a1b1a55d6e
