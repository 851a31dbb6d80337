journal --pending --json --file $FIXTURES/journal/sample.jsonl
