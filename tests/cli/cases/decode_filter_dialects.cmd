decode --format table --filter 'dialect:nservicebus OR dialect:rebus OR dialect:masstransit OR dialect:wolverine' $FIXTURES/snapshots/frameworks.jsonl
