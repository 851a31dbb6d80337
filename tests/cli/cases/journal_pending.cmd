journal --pending --file $FIXTURES/journal/sample.jsonl
