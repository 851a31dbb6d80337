report --no-journal --url amqp://guest@127.0.0.1:1/ $FIXTURES/snapshots/incident.jsonl
