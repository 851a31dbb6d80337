#!/usr/bin/env python3
"""The explorer answers keys while a live peek runs (issue #17's must-show).

A private RabbitMQ node (scripts/broker; DLQX_TEST_BROKER_DIR uses one already running) is
seeded with 100,000 dead letters by the project's own seeder (dlqx-seed --scenario bulk), and
`dlqx QUEUE` is started in a pseudo-terminal on that queue. Once the peek is under way (the
broker counts dlqx's consumer on the queue and the status line shows the peek), cursor keys
are written one at a time, each after the screen has been quiet for a moment, and the time
from writing a key to the first output bytes after it is measured: the loop writes nothing
while it is held, so that is the time the key waited. It fails when the 95th percentile is 50
ms or more, or any key waited 250 ms or more, and prints p50, p95 and the maximum.

The measurement only counts while the peek runs: the broker must still count dlqx's consumer on
the queue after the last key was answered (the peek is one consume from its start to its end),
otherwise the test is void, and fails. Keys go on until the peek has ended (the close that gives
every message back, the depth counted again): none of those may wait 250 ms either.

usage: keys_latency.py DLQX DLQX_SEED SOURCE_ROOT
environment: KEYS_N messages (default 100000), KEYS_COUNT keys (default 100)
"""
import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time

P95_MAX_S = 0.050
MAX_S = 0.250
QUIET_S = 0.015  # the screen quiet this long before a key is written
KEY = b"j"  # down: the cursor moves one row, two rows are drawn again


def fail(msg):
    print("keys-latency: FAIL: " + msg, flush=True)
    sys.exit(1)


def broker_env(root, tmp):
    """The node's environment (started here unless DLQX_TEST_BROKER_DIR names one)."""
    d = os.environ.get("DLQX_TEST_BROKER_DIR", "")
    own = False
    if not d:
        with open(os.path.join(tmp, "broker.log"), "w") as log:
            out = subprocess.run([os.path.join(root, "scripts/broker"), "start"],
                                 stdout=subprocess.PIPE, stderr=log, text=True)
        lines = out.stdout.strip().splitlines()
        d = lines[-1] if lines else ""
        if not d or not os.path.isfile(os.path.join(d, "env")):
            with open(os.path.join(tmp, "broker.log")) as log:
                sys.stdout.write(log.read())
            fail("the test broker did not start")
        own = True
    env = {}
    with open(os.path.join(d, "env")) as f:
        for line in f:
            m = re.match(r"^(?:export )?([A-Z_0-9]+)=(.*)$", line.strip())
            if m:
                env[m.group(1)] = m.group(2)
    return d, own, env


def queue_state(dlqx, env, queue):
    """(ready, consumers) by passive declare, or (None, None)."""
    out = subprocess.run([dlqx, "queues", "--no-mgmt", "--json", queue], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in out.stdout.splitlines():
        try:
            q = json.loads(line)
        except ValueError:
            continue
        if isinstance(q, list):
            q = q[0] if q else {}
        if q.get("name") == queue:
            return q.get("ready"), q.get("consumers")
    return None, None


class Pty:
    """dlqx on a pseudo-terminal of 120x40; its output read as it comes, with when."""

    def __init__(self, argv, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.text = bytearray()

    def read(self, timeout):
        """Reads what is there within timeout: the bytes ("" at none), at the first byte's time."""
        r, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not r:
            return b"", None
        t = time.monotonic()
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            data = b""
        self.text += data
        if len(self.text) > 1 << 20:
            del self.text[: len(self.text) - (1 << 19)]
        return data, t

    def quiet(self, span, limit):
        """Reads until nothing came for span seconds (at most limit seconds)."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            data, _ = self.read(span)
            if not data:
                return True
        return False

    def wait_for(self, pattern, limit):
        end = time.monotonic() + limit
        while time.monotonic() < end:
            if re.search(pattern, bytes(self.text)):
                return True
            self.read(0.05)
        return False

    def key(self):
        """Writes a key once the screen is quiet: seconds until the first output after it, or
        None when nothing came within 2 s."""
        self.quiet(QUIET_S, 1.0)
        t0 = time.monotonic()
        os.write(self.fd, KEY)
        data, t = self.read(2.0)
        return t - t0 if data else None

    def close(self):
        try:
            os.write(self.fd, b"\x07q")  # Ctrl-g stops the peek (all given back), q quits
        except OSError:
            pass
        end = time.monotonic() + 30
        while time.monotonic() < end:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return
            self.read(0.1)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def percentile(xs, p):
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[-3])
        return 2
    dlqx, seed, root = (os.path.abspath(a) for a in sys.argv[1:])
    n = int(os.environ.get("KEYS_N", "100000"))
    count = int(os.environ.get("KEYS_COUNT", "100"))
    tmp = tempfile.mkdtemp(prefix="dlqx-keys-")
    node, own, benv = broker_env(root, tmp)
    env = dict(os.environ)
    env.update(benv)
    prefix = "kl%d-" % os.getpid()  # a queue of its own on a node that is reused
    queue = prefix + "bulk.dlq"
    ui = None
    try:
        with open(os.path.join(tmp, "seed.out"), "w") as out:
            rc = subprocess.run([seed, "--scenario", "bulk", "--prefix", prefix, "--count", str(n),
                                 "--size", "128", "--window", "2000"], env=env, stdout=out,
                                stderr=subprocess.STDOUT).returncode
        ready, _ = queue_state(dlqx, env, queue)
        if rc != 0 or ready != n:
            fail("seeding: %s holds %s messages, not %d (dlqx-seed exit %d)" % (queue, ready, n, rc))
        print("ok    seeded: %s holds %d messages" % (queue, n), flush=True)

        uenv = dict(env, TERM="xterm-256color", LC_ALL="C.UTF-8", LANG="C.UTF-8", NO_COLOR="1",
                    TZ="UTC")
        ui = Pty([dlqx, queue], uenv)
        # The peek is under way: its status line was drawn (curses then writes only what
        # changes in it) and the broker counts its consumer.
        if not ui.wait_for(rb"peek " + re.escape(queue).encode(), 60):
            fail("the peek's progress line never showed; the screen ended with %r"
                 % bytes(ui.text[-300:]))
        consumers = None
        end = time.monotonic() + 60
        while consumers != 1 and time.monotonic() < end:
            ui.read(0.1)
            _, consumers = queue_state(dlqx, env, queue)
        if consumers != 1:
            fail("void: the broker counts %s consumers on %s before the first key, not dlqx's"
                 % (consumers, queue))
        waits = []
        for _ in range(count):
            w = ui.key()
            if w is None:
                fail("a key was not answered within 2 s")
            waits.append(w)
        p50 = percentile(waits, 50) * 1000
        p95 = percentile(waits, 95) * 1000
        worst = max(waits) * 1000
        line = "%d keys while peeking %d: p50 %.1f ms, p95 %.1f ms, max %.1f ms" % (
            len(waits), n, p50, p95, worst)
        print("      " + line, flush=True)
        ready, consumers = queue_state(dlqx, env, queue)
        if consumers != 1:
            fail("void: the peek ended before the last key was answered (%s consumers, %s ready "
                 "of %d): it measured nothing while a peek ran; a larger KEYS_N makes it longer"
                 % (consumers, ready, n))
        print("ok    the peek was running from the first key to the last (%s of %d ready, "
              "dlqx holding the rest)" % (ready, n), flush=True)
        if p95 >= P95_MAX_S * 1000 or worst >= MAX_S * 1000:
            fail(line + " (the limits: p95 < %.0f ms, max < %.0f ms)" % (P95_MAX_S * 1000,
                                                                         MAX_S * 1000))
        print("ok    within the limits: p95 < %.0f ms, no key %.0f ms or more"
              % (P95_MAX_S * 1000, MAX_S * 1000), flush=True)
        # Keys on until the peek has ended: its end (the close that gives 100,000 messages back,
        # the depth counted again) holds no key either.
        tail = []
        end = time.monotonic() + 120
        while consumers == 1 and time.monotonic() < end:
            for _ in range(10):
                w = ui.key()
                if w is None:
                    fail("a key was not answered within 2 s as the peek ended")
                tail.append(w)
            ready, consumers = queue_state(dlqx, env, queue)
        for _ in range(20):  # and a few after it
            w = ui.key()
            tail.append(w if w is not None else 2.0)
        worst = max(tail) * 1000
        if consumers == 1 or worst >= MAX_S * 1000:
            fail("%d keys as the peek ended (consumers now %s): the longest waited %.1f ms"
                 % (len(tail), consumers, worst))
        print("ok    %d keys as the peek ended and after: the longest waited %.1f ms"
              % (len(tail), worst), flush=True)
        ui.close()
        ui = None
        ready, consumers = queue_state(dlqx, env, queue)
        for _ in range(50):
            if ready == n:
                break
            time.sleep(0.1)
            ready, consumers = queue_state(dlqx, env, queue)
        if ready != n:
            fail("after the explorer stopped, %s holds %s messages, not %d" % (queue, ready, n))
        print("ok    stopped: every message given back (%d ready)" % n, flush=True)
        return 0
    finally:
        if ui:
            ui.close()
        if own:
            subprocess.run([os.path.join(root, "scripts/broker"), "stop", node, "--fast"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    sys.exit(main())
