tree --of a0000000-0000-4000-8000-00000000000a --json $FIXTURES/snapshots/incident.jsonl
