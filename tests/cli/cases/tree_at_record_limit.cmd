tree --max-record-size 2066 $FIXTURES/snapshots/oversize.jsonl
