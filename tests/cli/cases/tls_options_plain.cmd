peek q --url amqp://u@127.0.0.1:1/%2F --cacert ca.pem --no-mgmt
