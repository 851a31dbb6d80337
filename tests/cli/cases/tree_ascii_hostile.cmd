tree --ascii $FIXTURES/snapshots/incident.jsonl $FIXTURES/snapshots/hostile.jsonl
