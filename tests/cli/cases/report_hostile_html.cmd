report --format=html --no-journal $FIXTURES/snapshots/hostile.jsonl
