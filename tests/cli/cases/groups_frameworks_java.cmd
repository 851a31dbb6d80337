groups --json --filter 'exception:java.*' $FIXTURES/snapshots/frameworks.jsonl
