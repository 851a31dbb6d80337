journal --pending --file $FIXTURES/journal/resolved.jsonl
