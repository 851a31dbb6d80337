decode --max-record-size 12Q $FIXTURES/snapshots/oversize.jsonl
