report --no-journal nosuchq --url amqp://guest@127.0.0.1:1/
