peek q --url amqps://u@127.0.0.1:1/%2F --mgmt-url http://127.0.0.1:1/
