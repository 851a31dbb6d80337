cat $FIXTURES/snapshots/malformed.jsonl
