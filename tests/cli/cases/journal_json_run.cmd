journal --json --run c1d2 --file $FIXTURES/journal/sample.jsonl
