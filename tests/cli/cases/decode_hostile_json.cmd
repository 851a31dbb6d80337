decode --ascii $FIXTURES/snapshots/hostile.jsonl
