tree --filter 'type:payment.*' $FIXTURES/snapshots/incident.jsonl
