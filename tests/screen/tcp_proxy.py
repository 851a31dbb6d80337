#!/usr/bin/env python3
"""A TCP proxy that can be made to hang: while the file HANG exists it forwards nothing more
in either direction (connections stay open, nothing is answered), as a stuck listener does.
The queues view's test puts it in front of the management API to show that a hung API never
holds a key and shows as stale, not as zero; the explorer's replay failover test puts it in
front of AMQP and kills it, as a node that dies, or mutes the client's side of it (MUTE_FILE:
while it exists nothing from the client goes upstream, while the broker's frames still come
back: its confirms arrive, the client's acks and heartbeats are lost, until the broker closes
the connection for the missed heartbeats). The explorer's side-by-side test holds ONE
connection, as a broker that pauses one queue does: with HOLD_NAME and HOLD_FILE in the
environment, a connection whose client has sent the bytes HOLD_NAME (the queue's name, in its
declare or consume) and has since been sent HOLD_AFTER bytes (default 0) by the broker forwards
nothing more in either direction while HOLD_FILE exists; the other connections carry on.

usage: tcp_proxy.py UPSTREAM_PORT PORT_FILE HANG_FILE [MUTE_FILE]   (writes its port to PORT_FILE)
"""
import os
import select
import socket
import sys
import threading
import time

upstream, port_file, hang = int(sys.argv[1]), sys.argv[2], sys.argv[3]
mute = sys.argv[4] if len(sys.argv) > 4 else None
hold_name = os.environ.get("HOLD_NAME", "").encode()
hold_file = os.environ.get("HOLD_FILE")
hold_after = int(os.environ.get("HOLD_AFTER", "0"))


def pump(client):
    try:
        server = socket.create_connection(("127.0.0.1", upstream), timeout=5)
    except OSError:
        client.close()
        return
    peers = {client: server, server: client}
    tail = b""  # the client's last bytes, for a name split between two reads
    since = None  # bytes from the broker since the client named HOLD_NAME (None: not named)
    try:
        while True:
            if os.path.exists(hang):
                time.sleep(0.05)  # hold everything: a hung listener
                continue
            if since is not None and since >= hold_after and os.path.exists(hold_file):
                time.sleep(0.05)  # hold this connection only: one queue paused
                continue
            muted = mute is not None and os.path.exists(mute)
            if muted and client in peers:
                del peers[client]  # once muted, the client is never heard again
            ready, _, _ = select.select(list(peers), [], [], 0.05)
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                if hold_name and hold_file:
                    if s is client and since is None:
                        tail = (tail + data)[-(len(hold_name) + 65536):]
                        if hold_name in tail:
                            since = 0
                    elif s is server and since is not None:
                        since += len(data)
                (client if s is server else server).sendall(data)
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
