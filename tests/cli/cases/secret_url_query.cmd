peek q --url 'amqp://u:se?cret@127.0.0.1:1/%2F' --no-mgmt
