open snapshots/incident.jsonl
