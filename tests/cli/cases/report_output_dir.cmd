report --no-journal -o snapshots $FIXTURES/snapshots/incident.jsonl
