#!/usr/bin/env python3
"""A TCP proxy in front of the management API that can be made to hang: while the file
HANG exists it forwards nothing more in either direction (connections stay open, nothing is
answered), as a management listener that is stuck does. The tests of the queues view use it
to show that a hung API never holds a key and shows as stale, not as zero.

usage: mgmt_proxy.py UPSTREAM_PORT PORT_FILE HANG_FILE   (writes its port to PORT_FILE)
"""
import os
import select
import socket
import sys
import threading
import time

upstream, port_file, hang = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def pump(client):
    try:
        server = socket.create_connection(("127.0.0.1", upstream), timeout=5)
    except OSError:
        client.close()
        return
    peers = {client: server, server: client}
    try:
        while True:
            if os.path.exists(hang):
                time.sleep(0.05)  # hold everything: a hung listener
                continue
            ready, _, _ = select.select(list(peers), [], [], 0.05)
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                peers[s].sendall(data)
    except OSError:
        pass
    finally:
        client.close()
        server.close()


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
with open(port_file + ".tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
while True:
    c, _ = listener.accept()
    threading.Thread(target=pump, args=(c,), daemon=True).start()
