tree --max-record-size 2065 $FIXTURES/snapshots/oversize.jsonl
