report --no-journal orders.dlq
