report --journal $FIXTURES/journal/none.jsonl $FIXTURES/snapshots/hostile.jsonl
