cat --redact body --redact=header.x-trace $FIXTURES/snapshots/secrets.jsonl
