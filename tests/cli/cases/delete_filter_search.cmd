delete payments.dlq --snapshot $FIXTURES/snapshots/incident.jsonl --dry-run --filter 'TimeoutException -type:payment.refund'
