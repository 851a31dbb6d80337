#!/usr/bin/env python3
"""Writes fixtures/cloudevents/*.expect.json, *.replay.jsonl and *.reissue.jsonl from the
snapshots that cloudevents-gen.js + `dlqx peek` captured (the broker's x-death times are read
from them, so a fresh capture needs only this script run again).

Run from the repository root: python3 tests/frameworks/node/cloudevents-expect.py
"""
import json
import os

D = os.path.join("fixtures", "cloudevents")
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TP = f"00-{TRACE}-00f067aa0ba902b7-01"
BROKER_OWNED = ("x-death", "x-first-death-exchange", "x-first-death-queue", "x-first-death-reason",
                "x-last-death-exchange", "x-last-death-queue", "x-last-death-reason", "x-delivery-count")

def load(name):
    with open(os.path.join(D, name + ".jsonl")) as f:
        return [json.loads(l) for l in f if l.strip()]

def dump_json(name, obj):
    with open(os.path.join(D, name), "w") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")

def dump_jsonl(name, recs):
    with open(os.path.join(D, name), "w") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")

def death(r):
    d = r["headers"]["x-death"][0]
    return d["time"]["value"] * 1000, d["queue"], d["exchange"], d["routing-keys"][0], d["count"]

def broker_common(r):
    t, q, ex, rk, count = death(r)
    return {"attempt": count, "causation_id": None, "error_type": None, "error_message": None,
            "stack_trace": None, "error": f"dead-lettered by the broker: rejected from {q}",
            "error_from_broker": True, "failed_at_ms": t,
            "source": {"queue": q, "exchange": ex, "routing_key": rk, "how": "x-death"}}

def valid(r, id_, prefix, mode, first_seen_ms, extensions, datacontenttype="application/json",
          type_="com.example.order.placed.v1", source="https://shop.example.com/orders",
          subject="orders/A-1001", dataschema="https://schemas.example.com/order-placed-v1.json"):
    e = {"dialect": "cloudevents", "id": id_, "type": type_, "origin": source,
         "correlation_id": TRACE if "traceparent" in extensions else id_,
         "first_seen_ms": first_seen_ms, "accepted": True, "reject_reason": None}
    e.update(broker_common(r))
    e["cloudevents"] = {"mode": mode, "prefix": prefix, "specversion": "1.0", "subject": subject,
                        "datacontenttype": datacontenttype, "dataschema": dataschema,
                        "extensions": extensions}
    return e

def replay_of(r, target):
    h = {k: v for k, v in r.get("headers", {}).items() if k not in BROKER_OWNED}
    # published through the default exchange to the queue (the first death's exchange is "")
    out = {"v": 1, "queue": target, "exchange": "", "routing_key": target,
           "properties": dict(r["properties"]), "headers": h}
    if "body" in r: out["body"] = r["body"]
    else: out["body_base64"] = r["body_base64"]
    return out

T1 = 1796455800123  # 2026-12-05T07:30:00.123Z
EXT = {"tenant": "acme", "traceparent": TP}

u = load("binary-amqp-underscore")
dump_json("binary-amqp-underscore.expect.json", [
    valid(u[0], "evt-0001", "cloudEvents_", "binary", T1, EXT),
    valid(u[1], "evt-0002", "cloudEvents_", "binary", T1 - 123, dict(EXT, sequence=7)),
])
dump_jsonl("binary-amqp-underscore.replay.jsonl", [replay_of(r, death(r)[1]) for r in u])
re = []
for r in u:
    x = replay_of(r, death(r)[1])
    x["headers"]["cloudEvents_id"] = "<uuid>"
    re.append(x)
dump_jsonl("binary-amqp-underscore.reissue.jsonl", re)

c = load("binary-amqp-colon")
dump_json("binary-amqp-colon.expect.json", [valid(c[0], "evt-0003", "cloudEvents:", "binary", T1, EXT)])
h = load("binary-http")
dump_json("binary-http.expect.json", [valid(h[0], "evt-0004", "ce-", "binary", T1, EXT)])
k = load("binary-kafka")
dump_json("binary-kafka.expect.json", [valid(k[0], "evt-0005", "ce_", "binary", T1, EXT)])

s = load("structured")
s2 = valid(s[1], "evt-0007", None, "structured", 1796455860000, {}, datacontenttype="application/octet-stream",
           type_="com.example.sensor.reading", source="/sensors/tn-1234567", subject=None, dataschema=None)
dump_json("structured.expect.json", [valid(s[0], "evt-0006", None, "structured", T1, EXT), s2])
dump_jsonl("structured.replay.jsonl", [replay_of(r, death(r)[1]) for r in s])
sre = []
for r in s:
    x = replay_of(r, death(r)[1])
    old_id = json.loads(r["body"])["id"]
    assert x["body"].count('"id":"%s"' % old_id) == 1
    x["body"] = x["body"].replace('"id":"%s"' % old_id, '"id":"<uuid>"')
    sre.append(x)
dump_jsonl("structured.reissue.jsonl", sre)

inv = load("invalid-missing-source")
def invalid(r, reason, **kw):
    e = {"dialect": "cloudevents", "accepted": False, "reject_reason": reason}
    e.update(broker_common(r)); e.update(kw)
    return e
dump_json("invalid-missing-source.expect.json", [
    invalid(inv[0], "missing required attribute: source", id="evt-0008", type="com.example.order.placed.v1",
            origin=None, cloudevents={"mode": "binary", "prefix": "cloudEvents_"}),
    invalid(inv[1], "missing required attribute: type", id="evt-0009", origin="https://shop.example.com/orders",
            cloudevents={"mode": "structured", "prefix": None}),
    invalid(inv[2], "structured body is not valid JSON", cloudevents={"mode": "structured", "prefix": None}),
])

ho = load("hostile")
dump_json("hostile.expect.json", [
    invalid(ho[0], "attribute id is not a string",
            type="com.example.\u001b]52;c;ZWNobyBwd25lZA==\u0007evil\u001b[2J", origin=None,
            cloudevents={"mode": "binary", "prefix": "cloudEvents_", "specversion": "1.0", "subject": None}),
])

nm = load("nearmiss-json-id-type")
dump_json("nearmiss-json-id-type.expect.json", [{"dialect": "amqp"}, {"dialect": "amqp"}])
print("written to", D)
