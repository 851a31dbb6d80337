delete payments.dlq --snapshot $FIXTURES/snapshots/incident.jsonl --dry-run --filter 'type:payment.*' --filter 'attempt>=5'
