journal --pending --file $FIXTURES/journal/torn.jsonl
