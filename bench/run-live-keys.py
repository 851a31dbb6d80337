#!/usr/bin/env python3
"""Keys in the explorer's live mode while dead letters arrive (issue #14's bench).

A private RabbitMQ node (scripts/broker; DLQX_TEST_BROKER_DIR uses one already running) gets a
DLQ fed by a work queue whose messages expire into it at once (x-message-ttl 0), and
bench/live_pace seeds it with PRE dead letters. `dlqx DLQ` runs in a pseudo-terminal of
120x40; once the snapshot is complete, KEYS keys are timed with nothing arriving (the
baseline, in the same run), then `L` is pressed and live_pace dead-letters RATE messages a
second (CAUSES causes, so the groups move) while KEYS keys are timed again.

A key is `?` (the help view): its time is from writing it to the moment the help's own text
("KEYS") has come out; Backspace then goes back, and the next key waits for the screen to be
quiet for 15 ms or 1 s at most (live mode redraws a few times a second). It prints p50, p95 and
the maximum of both rounds and their ratio, and what the tap (the queue of dlqx's own that
copies the DLQ's arrivals) went through: its largest depth while they arrived (the management
API's 5 s statistics), how many it delivered to the explorer and how many were routed to it,
against how many were published — whether the explorer keeps up. Figures only: nothing passes or
fails (the held limit is the screen test tests/screen/keys_latency.py, for a peek).

usage: bench/run-live-keys.py BUILD_DIR   (from the repository root; BUILD_DIR has dlqx and
       bench/live_pace)
environment: RATE (1000), SECONDS (40), PRE (3000), CAUSES (8), KEYS (150)
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "screen"))
from keys_latency import Pty, broker_env, percentile  # noqa: E402  (the screen test's pty)

QUIET_S = 0.015


def mgmt(env, method, path, body=None):
    with open(env["DLQX_PASSWORD_FILE"]) as f:
        password = f.read().strip()
    req = urllib.request.Request(env["DLQX_MGMT_URL"].split(",")[0].rstrip("/") + "/api/" + path,
                                 method=method,
                                 data=json.dumps(body).encode() if body is not None else None)
    req.add_header("content-type", "application/json")
    req.add_header("authorization",
                   "Basic " + base64.b64encode(("dlqx:" + password).encode()).decode())
    with urllib.request.urlopen(req, timeout=10) as r:
        data = r.read()
    return json.loads(data) if data else None


def depth(dlqx, env, queue):
    out = subprocess.run([dlqx, "queues", "--no-mgmt", "--json", queue], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    m = re.search(r'"ready":(\d+)', out)
    return int(m.group(1)) if m else None


def timed_help(ui):
    """Seconds from writing ? until the help's text came out, then back to the list (what came
    out after each key is gathered here: the Pty keeps only its last half megabyte)."""
    ui.quiet(QUIET_S, 1.0)
    t0 = time.monotonic()
    os.write(ui.fd, b"?")
    seen, end, t = b"", t0 + 5, None
    while time.monotonic() < end:
        data, _ = ui.read(0.05)
        seen = seen[-64:] + data
        if re.search(rb"KEYS|move up|this help", seen):
            t = time.monotonic() - t0
            break
    if t is None:
        return None
    os.write(ui.fd, b"\x7f")
    seen, end = b"", time.monotonic() + 5
    while time.monotonic() < end and b"messages" not in seen:
        data, _ = ui.read(0.05)
        seen = seen[-64:] + data
    return t


def rounds(ui, n, name):
    waits = []
    for i in range(n):
        w = timed_help(ui)
        if w is None:
            sys.exit("live-keys: %s key %d was not answered within 5 s; the screen ended with %r"
                     % (name, i + 1, bytes(ui.text[-400:])))
        waits.append(w * 1000)
    return waits


def tap_queue(env, p):
    """The name of the explorer's tap: the server-named queue bound to the DLQ's exchange."""
    for b in mgmt(env, "GET", "exchanges/%2F/" + p + ".dlx/bindings/source") or []:
        if b.get("destination_type") == "queue" and b.get("destination", "").startswith("amq.gen-"):
            return b["destination"]
    return None


def tap_stats(env, tap):
    """(depth, delivered) as the management API last counted them."""
    q = mgmt(env, "GET", "queues/%2F/" + urllib.parse.quote(tap, safe=""))
    st = q.get("message_stats") or {}
    return q.get("messages"), st.get("deliver_no_ack")


def shown(ui):
    """How many arrivals the explorer has taken in: Ctrl-l redraws the whole screen, whose title
    says "LIVE N new" (curses otherwise writes only the digits that change)."""
    os.write(ui.fd, b"\x0c")
    seen, end = b"", time.monotonic() + 5
    while time.monotonic() < end:
        data, _ = ui.read(0.05)
        seen = seen[-4096:] + data
        found = re.findall(rb"LIVE ([0-9,]+) new", seen)
        if found and ui.quiet(QUIET_S, 0.5):
            return int(found[-1].replace(b",", b""))
    return None


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-3])
        return 2
    build = os.path.abspath(sys.argv[1])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dlqx = os.path.join(build, "dlqx")
    pace = os.path.join(build, "bench", "live_pace")
    rate = int(os.environ.get("RATE", "1000"))
    seconds = int(os.environ.get("SECONDS", "40"))
    pre = int(os.environ.get("PRE", "3000"))
    causes = os.environ.get("CAUSES", "8")
    nkeys = int(os.environ.get("KEYS", "150"))
    tmp = tempfile.mkdtemp(prefix="dlqx-livekeys-")
    node, own, benv = broker_env(root, tmp)
    env = dict(os.environ)
    env.update(benv)
    p = "lk%d" % os.getpid()
    dlq, work = p + ".dlq", p + ".work"
    ui = None
    producer = None
    try:
        mgmt(env, "PUT", "exchanges/%2F/" + p + ".dlx", {"type": "direct"})
        mgmt(env, "PUT", "queues/%2F/" + dlq, {"durable": True})
        mgmt(env, "POST", "bindings/%2F/e/" + p + ".dlx/q/" + dlq, {"routing_key": work})
        mgmt(env, "PUT", "queues/%2F/" + work, {"durable": True, "arguments": {
            "x-message-ttl": 0, "x-dead-letter-exchange": p + ".dlx"}})
        subprocess.run([pace, work, str(pre), "1", causes], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        end = time.monotonic() + 60
        while depth(dlqx, env, dlq) != pre and time.monotonic() < end:
            time.sleep(0.2)
        if depth(dlqx, env, dlq) != pre:
            sys.exit("live-keys: %s never held %d dead letters" % (dlq, pre))
        uenv = dict(env, TERM="xterm-256color", LC_ALL="C.UTF-8", LANG="C.UTF-8", NO_COLOR="1",
                    TZ="UTC")
        ui = Pty([dlqx, "--no-bell", dlq], uenv)
        if not ui.wait_for(rb"complete: [0-9,]+ of", 120):
            sys.exit("live-keys: the snapshot never completed: %r" % bytes(ui.text[-300:]))
        idle = rounds(ui, nkeys, "idle")
        os.write(ui.fd, b"L")
        if not ui.wait_for(rb"LIVE [0-9,]+ new", 30):
            sys.exit("live-keys: L did not start following: %r" % bytes(ui.text[-300:]))
        tap = tap_queue(env, p)
        if not tap:
            sys.exit("live-keys: no tap queue bound to %s.dlx after L" % p)
        producer = subprocess.Popen([pace, work, str(rate), str(seconds), causes], env=env,
                                    stdout=subprocess.PIPE, text=True)
        t_start = time.monotonic()
        time.sleep(2)  # the arrivals are under way
        live, lags = [], []
        while len(live) < nkeys:  # keys, and every 25 keys how far behind the explorer is
            live += rounds(ui, min(25, nkeys - len(live)), "live")
            n, t = shown(ui), time.monotonic()
            if n is not None and producer.poll() is None:
                lags.append(min(rate * seconds, (t - t_start) * rate) - n)
        running = producer.poll() is None
        while producer.poll() is None:  # the screen read on (a pty left unread stops dlqx)
            end = time.monotonic() + 1
            while time.monotonic() < end:
                ui.read(0.1)
            n, t = shown(ui), time.monotonic()
            if n is not None and producer.poll() is None:
                lags.append(min(rate * seconds, (t - t_start) * rate) - n)
        out, _ = producer.communicate(timeout=60)
        producer = None
        t_end = time.monotonic()
        n = shown(ui)
        while n != rate * seconds and time.monotonic() < t_end + 60:
            ui.read(0.2)
            n = shown(ui)
        caught_up = time.monotonic() - t_end
        stats = tap_stats(env, tap)
        print("live-keys: dlqx %s, %d dead letters before, then %d/s for %d s (%s causes)"
              % (dlq, pre, rate, seconds, causes))
        print("  " + out.strip())
        for name, w in (("idle", idle), ("live", live)):
            print("  %-4s %d keys (?): p50 %6.1f ms  p95 %6.1f ms  max %6.1f ms"
                  % (name, len(w), percentile(w, 50), percentile(w, 95), max(w)))
        print("  ratio live/idle: p50 %.2f  p95 %.2f"
              % (percentile(live, 50) / percentile(idle, 50),
                 percentile(live, 95) / percentile(idle, 95)))
        print("  %s (the keys were timed %s)" % (
            "the producer ran throughout" if running else "void: the producer ended first",
            "while it ran" if running else "partly after it"))
        print("  behind the producer while it ran (arrivals published less those the title "
              "counted; %d looks): median %.0f, most %.0f"
              % (len(lags), percentile(lags, 50) if lags else -1, max(lags or [-1])))
        print("  after the producer ended: the title counted %s of %d arrivals %.1f s later"
              % (n, rate * seconds, caught_up))
        print("  the tap: depth %s at the end (the management API's figures, 5 s old; no-ack: the "
              "broker pushes what it holds into the socket)" % stats[0])
        return 0
    finally:
        if producer:
            producer.kill()
        if ui:
            ui.close()
        if own:
            subprocess.run([os.path.join(root, "scripts/broker"), "stop", node, "--fast"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    sys.exit(main())
