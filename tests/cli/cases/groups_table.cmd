groups $FIXTURES/snapshots/incident.jsonl
