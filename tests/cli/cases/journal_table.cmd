journal --file $FIXTURES/journal/sample.jsonl
