journal --run zzz --file $FIXTURES/journal/sample.jsonl
