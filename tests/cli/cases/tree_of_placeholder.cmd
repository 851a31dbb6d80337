tree --of f1000000-0000-4000-8000-0000000000f1 $FIXTURES/snapshots/incident.jsonl
