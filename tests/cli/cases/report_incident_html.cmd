report --format html --journal $FIXTURES/journal/sample.jsonl $FIXTURES/snapshots/incident.jsonl
