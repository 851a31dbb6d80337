decode --format table --filter 'group=g:3c295ad0b7f02875' $FIXTURES/snapshots/incident.jsonl
