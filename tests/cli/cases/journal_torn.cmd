journal --file $FIXTURES/journal/torn.jsonl
