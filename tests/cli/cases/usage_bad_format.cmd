decode --format yaml
