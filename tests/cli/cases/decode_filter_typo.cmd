decode --filter "-error~Timeout" $FIXTURES/snapshots/incident.jsonl
