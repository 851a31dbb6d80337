delete payments.dlq --snapshot $FIXTURES/snapshots/incident.jsonl --dry-run --group g:3c295ad0b7f02875 --filter type:payment.*
