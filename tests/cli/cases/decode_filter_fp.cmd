decode --filter "fp=6e3876a1b1a55d6e" --format table $FIXTURES/snapshots/incident.jsonl
