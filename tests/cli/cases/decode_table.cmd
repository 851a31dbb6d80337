decode --format table $FIXTURES/snapshots/incident.jsonl
