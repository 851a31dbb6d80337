groups --json --filter 'fp=6e3876a1b1a55d6e' $FIXTURES/snapshots/incident.jsonl
