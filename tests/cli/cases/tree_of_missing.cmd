tree --of nope $FIXTURES/snapshots/incident.jsonl
