delete q --all --yes --url 'amqp://u@127.0.0.1:1/%2F?read_only=enabled' --no-mgmt
