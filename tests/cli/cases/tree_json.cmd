tree --json $FIXTURES/snapshots/incident.jsonl
