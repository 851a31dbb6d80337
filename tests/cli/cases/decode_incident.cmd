decode $FIXTURES/snapshots/incident.jsonl
