tree --of c0000000-0000-4000-8000-00000000000c $FIXTURES/snapshots/incident.jsonl
