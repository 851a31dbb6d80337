report --format pdf $FIXTURES/snapshots/incident.jsonl
