report --no-journal -o /dev/null/x $FIXTURES/snapshots/incident.jsonl
