cat --redact user.token $FIXTURES/snapshots/secrets.jsonl
