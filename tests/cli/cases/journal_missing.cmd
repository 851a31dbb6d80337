journal --file $FIXTURES/journal/no-such-file.jsonl
