cat --ascii $FIXTURES/snapshots/hostile.jsonl
