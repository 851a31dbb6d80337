tree $FIXTURES/snapshots/incident.jsonl
