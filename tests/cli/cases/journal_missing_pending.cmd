journal --pending --file $FIXTURES/journal/no-such-file.jsonl
