groups --json -
