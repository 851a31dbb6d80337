cat --max-record-size=1K $FIXTURES/snapshots/oversize.jsonl
