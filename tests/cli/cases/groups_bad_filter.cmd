groups --filter 'attempt=>3' $FIXTURES/snapshots/incident.jsonl
