report --no-journal $FIXTURES/snapshots/report-markup.jsonl
