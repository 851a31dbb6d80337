decode --format table --filter 'exception:System.* failed_at>2026-01-02T04:00:00Z' $FIXTURES/snapshots/frameworks.jsonl
