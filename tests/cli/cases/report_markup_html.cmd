report --no-journal --format html $FIXTURES/snapshots/report-markup.jsonl
