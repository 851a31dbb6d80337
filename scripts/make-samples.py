#!/usr/bin/env python3
"""Writes the sample snapshot files under fixtures/snapshots/ (deterministic).

incident.jsonl: a realistic 3 a.m. incident across several dead-letter queues — AceMQ
set-aside copies, BabelQueue SDK dead letters, messages dead-lettered by the broker itself
(rejected, expired, maxlen, delivery_limit), a causal chain that spans queues, a replayed
message, encrypted and Avro-framed bodies.
hostile.jsonl: bytes aimed at the terminal and at the decoders: escape sequences, bidi
overrides, invalid UTF-8, wrong header types, integers too large, deep nesting.

The files are committed; run this only to regenerate them after changing it.
"""
import base64
import json
import os

T0 = 1767323045678  # 2026-01-02T03:04:05.678Z, the incident's first failure
OUT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "snapshots")


def typed(kind, value):
    return {"type": kind, "value": value}


def i32(v):
    return typed("int32", v)


def ts(ms):
    return typed("timestamp", ms // 1000)


def xdeath(entries, first=None):
    """Headers as RabbitMQ writes them on dead-lettering (keys sorted)."""
    arr = []
    for e in entries:
        t = {"count": e.get("count", 1), "exchange": e.get("exchange", ""),
             "queue": e["queue"], "reason": e["reason"],
             "routing-keys": e.get("routing_keys", [e["queue"]]), "time": ts(e["time"])}
        if "original_expiration" in e:
            t["original-expiration"] = e["original_expiration"]
        arr.append(dict(sorted(t.items())))
    first = first or entries[-1]
    return {"x-death": arr, "x-first-death-exchange": first.get("exchange", ""),
            "x-first-death-queue": first["queue"], "x-first-death-reason": first["reason"]}


def record(queue, headers=None, body="", props=None, rk=None, exchange="", fetched=None,
           redelivered=False, binary=False):
    r = {"v": 1, "queue": queue, "exchange": exchange, "routing_key": rk if rk is not None else queue,
         "redelivered": redelivered, "fetched_at_ms": fetched or T0 + 3600_000,
         "properties": props or {}}
    if headers is not None:
        r["headers"] = headers
    if binary:
        r["body_base64"] = base64.b64encode(body).decode()
    else:
        r["body"] = body
    return r


def acemq(id_, type_, corr, first_seen, attempt=1, causation=None, origin="orders@pod-7",
          error=None, extra=None):
    h = {"x-acemq-id": id_, "x-acemq-type": type_, "x-acemq-version": i32(1),
         "x-acemq-correlation": corr, "x-acemq-attempt": i32(attempt),
         "x-acemq-first-seen": first_seen}
    if causation:
        h["x-acemq-causation"] = causation
    if origin:
        h["x-acemq-origin"] = origin
    if error:
        h["x-acemq-error"] = error
    h.update(extra or {})
    return h


def acemq_props(id_):
    return {"content_type": "application/json", "delivery_mode": 2, "message_id": id_}


def bq(job, trace, data, meta_id, queue, created, attempts=0, dead_letter=None, lang="php",
       key="job", schema=1):
    env = {key: job, "trace_id": trace, "data": data,
           "meta": {"id": meta_id, "queue": queue, "lang": lang, "schema_version": schema,
                    "created_at": created}, "attempts": attempts}
    if dead_letter:
        env["dead_letter"] = dead_letter
    return json.dumps(env, ensure_ascii=False, separators=(",", ":"))


def bq_props(job, trace, meta_id):
    return {"content_type": "application/json", "content_encoding": "utf-8", "delivery_mode": 2,
            "type": job, "correlation_id": trace, "message_id": meta_id, "app_id": "babelqueue"}


def incident():
    recs = []
    corr = "c0ffee00-0000-4000-8000-000000000001"
    # A causal chain across queues: order -> payment -> charge, order -> shipment.
    recs.append(record("orders.dlq", acemq("a0000000-0000-4000-8000-00000000000a", "order.placed", corr,
                                            T0 - 60_000, attempt=5,
                                            error="exhausted 5 attempts: InventoryException: sku 4411 out of stock"),
                       '{"orderId":"A-1","sku":4411,"qty":2}', acemq_props("a0000000-0000-4000-8000-00000000000a")))
    recs.append(record("payments.dlq", acemq("b0000000-0000-4000-8000-00000000000b", "payment.requested", corr,
                                              T0 - 50_000, attempt=5, causation="a0000000-0000-4000-8000-00000000000a",
                                              origin="payments@pod-2",
                                              error="exhausted 5 attempts: TimeoutException: gateway timed out after 30000 ms"),
                       '{"orderId":"A-1","amountCents":4250,"currency":"GBP"}',
                       acemq_props("b0000000-0000-4000-8000-00000000000b")))
    recs.append(record("payments.gateway.dlq", acemq("c0000000-0000-4000-8000-00000000000c", "payment.charge", corr,
                                                      T0 - 40_000, attempt=3, causation="b0000000-0000-4000-8000-00000000000b",
                                                      origin="gateway@pod-9",
                                                      error="exhausted 3 attempts: TimeoutException: gateway timed out after 30012 ms"),
                       '{"orderId":"A-1","token":"tok_visa"}', acemq_props("c0000000-0000-4000-8000-00000000000c")))
    recs.append(record("shipping.dlq", acemq("d0000000-0000-4000-8000-00000000000d", "shipment.requested", corr,
                                              T0 - 30_000, attempt=2, causation="a0000000-0000-4000-8000-00000000000a",
                                              origin="shipping@pod-1",
                                              error="retrying cannot help: ArgumentError: unknown carrier \"dhl-xp\""),
                       '{"orderId":"A-1","carrier":"dhl-xp"}', acemq_props("d0000000-0000-4000-8000-00000000000d")))
    # A chain whose middle is missing: its parent was consumed fine and is not in any DLQ.
    corr2 = "c0ffee00-0000-4000-8000-000000000002"
    recs.append(record("payments.dlq", acemq("e0000000-0000-4000-8000-00000000000e", "payment.refund", corr2,
                                              T0 - 20_000, attempt=5, causation="f1000000-0000-4000-8000-0000000000f1",
                                              origin="payments@pod-3",
                                              error="exhausted 5 attempts: TimeoutException: gateway timed out after 29998 ms"),
                       '{"orderId":"A-7","amountCents":999}', acemq_props("e0000000-0000-4000-8000-00000000000e")))
    recs.append(record("payments.dlq", acemq("e1000000-0000-4000-8000-0000000000e1", "payment.refund.audit", corr2,
                                              T0 - 19_000, attempt=1, causation="e0000000-0000-4000-8000-00000000000e",
                                              origin="payments@pod-3",
                                              error="the handler reported an unprocessable message: audit log closed"),
                       '{"orderId":"A-7"}', acemq_props("e1000000-0000-4000-8000-0000000000e1")))
    # Broker-driven dead-lettering of an AceMQ message: x-death, no x-acemq-error.
    h = acemq("a1000000-0000-4000-8000-0000000000a1", "order.cancelled", "c0ffee00-0000-4000-8000-000000000003",
              T0 - 10_000, attempt=1)
    h.update(xdeath([{"queue": "orders", "reason": "rejected", "time": T0 - 9_000,
                      "exchange": "orders-events", "routing_keys": ["order.cancelled"]}]))
    recs.append(record("orders.dlq", dict(sorted(h.items())), '{"orderId":"A-9"}',
                       acemq_props("a1000000-0000-4000-8000-0000000000a1"), exchange="acemq.dlx",
                       rk="orders.dlq"))
    # A message that was replayed before and failed again.
    h = acemq("a2000000-0000-4000-8000-0000000000a2", "order.placed", "a2000000-0000-4000-8000-0000000000a2",
              T0 - 86_400_000, attempt=5,
              error="gave up after 5 attempts: Net::ReadTimeout: Net::ReadTimeout with #<TCPSocket:(closed)>",
              extra={"acemq-replayed-from": "orders.dlq", "acemq-replayed-at": "2026-01-01T12:00:00Z",
                     "acemq-replay-count": i32(1), "tenant": "acme",
                     "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
    recs.append(record("orders.dlq", h, '{"orderId":"A-2"}', acemq_props("a2000000-0000-4000-8000-0000000000a2")))
    # A newer library's reserved header, the route triple and an encrypted body.
    h = acemq("a3000000-0000-4000-8000-0000000000a3", "card.tokenised", "a3000000-0000-4000-8000-0000000000a3",
              T0 - 5_000, attempt=5, error="exhausted 5 attempts: CryptoException: key k-2026-01 revoked",
              extra={"x-acemq-route": "validate,charge,ship", "x-acemq-route-position": typed("int8", 1),
                     "x-acemq-route-id": "b0c1d2e3", "x-acemq-lane": typed("int16", 7)})
    recs.append(record("payments.dlq", h, b"\xae\x01\x09k-2026-01" + bytes(range(0, 48)),
                       {"content_type": "application/vnd.acemq.encrypted", "delivery_mode": 2,
                        "message_id": "a3000000-0000-4000-8000-0000000000a3"}, binary=True))
    h = acemq("a4000000-0000-4000-8000-0000000000a4", "inventory.adjusted", "a4000000-0000-4000-8000-0000000000a4",
              T0 - 4_000, attempt=2, error="could not be decoded: Avro::SchemaParseError: schema 17 unknown")
    recs.append(record("inventory.parked", h, b"\x00\x00\x00\x00\x11\x06A-1\x08acme\x84\x42",
                       {"content_type": "application/vnd.acemq.avro", "delivery_mode": 2,
                        "message_id": "a4000000-0000-4000-8000-0000000000a4"}, binary=True))
    # BabelQueue: SDK dead letters on <queue>.dlq.
    trace = "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b"
    body = bq("urn:babel:orders:created", trace, {"order_id": 1042, "amount_cents": 9990},
              "f1e2d3c4-b5a6-4789-90ab-cdef01234567", "orders", T0 - 2_000, attempts=3,
              dead_letter={"reason": "failed", "error": "Payment gateway timeout",
                           "exception": "App\\Exceptions\\GatewayTimeout", "failed_at": T0 + 1_000,
                           "original_queue": "orders", "attempts": 3, "lang": "php"})
    recs.append(record("orders.dlq", {"x-schema-version": 1, "x-source-lang": "php", "x-attempts": 3},
                       body, bq_props("urn:babel:orders:created", trace, "f1e2d3c4-b5a6-4789-90ab-cdef01234567")))
    body = bq("urn:babel:billing:invoice-issued", "9a8b7c6d-0000-4000-8000-000000000001",
              {"invoice": "INV-2026-0001", "lines": 3, "big": 9007199254740993, "name": "Zoë Ünïcødé 日本 😀"},
              "aaaaaaaa-0000-4000-8000-000000000001", "billing", T0 - 1_500, attempts=5, key="urn", lang="go",
              dead_letter={"reason": "max_attempts", "error": None, "exception": None,
                           "failed_at": T0 + 2_000, "original_queue": "billing", "attempts": 5, "lang": "go"})
    recs.append(record("billing.dlq", {"x-schema-version": 1, "x-source-lang": "go", "x-attempts": 5},
                       body, bq_props("urn:babel:billing:invoice-issued", "9a8b7c6d-0000-4000-8000-000000000001",
                                      "aaaaaaaa-0000-4000-8000-000000000001")))
    body = bq("urn:babel:billing:invoice-issued", "9a8b7c6d-0000-4000-8000-000000000002", {"invoice": "INV-2"},
              "aaaaaaaa-0000-4000-8000-000000000002", "billing", T0 - 1_000, schema=2,
              dead_letter={"reason": "poison", "error": "unsupported schema_version 2",
                           "exception": None, "failed_at": T0 + 2_500, "original_queue": "billing",
                           "attempts": 0, "lang": "node"}, lang="node")
    recs.append(record("billing.dlq", {}, body, {"content_type": "application/json", "app_id": "babelqueue"}))
    recs.append(record("billing.dlq", {}, json.dumps({"raw": "\u0000\u0001not json{", "dead_letter": {
        "reason": "poison", "error": "Syntax error", "exception": "JsonException", "failed_at": T0 + 3_000,
        "original_queue": "billing", "attempts": 0, "lang": "php"}}, separators=(",", ":")),
                       {"content_type": "application/json", "app_id": "babelqueue"}))
    # BabelQueue through a broker dead-letter exchange the user configured.
    body = bq("urn:babel:notify:email", "5d5d5d5d-0000-4000-8000-000000000001", {"to": "ops@example.com"},
              "bbbbbbbb-0000-4000-8000-000000000001", "notify", T0 - 500, lang="python")
    h = {"x-schema-version": 1, "x-source-lang": "python", "x-attempts": 0}
    h.update(xdeath([{"queue": "notify", "reason": "expired", "time": T0,
                      "routing_keys": ["notify"], "original_expiration": "60000"}]))
    recs.append(record("notify.dlq", dict(sorted(h.items())), body,
                       bq_props("urn:babel:notify:email", "5d5d5d5d-0000-4000-8000-000000000001",
                                "bbbbbbbb-0000-4000-8000-000000000001"), exchange="dlx", rk="notify"))
    # Plain AMQP, dead-lettered by the broker.
    h = xdeath([{"queue": "audit", "reason": "maxlen", "time": T0 + 4_000, "exchange": "audit-x",
                 "routing_keys": ["audit.write"]}])
    recs.append(record("audit.dead", h, "user 17 logged in",
                       {"content_type": "text/plain; charset=utf-8", "timestamp": (T0 - 3_000) // 1000,
                        "message_id": "audit-1", "app_id": "auth-service"}, exchange="dlx", rk="audit.write"))
    h = xdeath([{"queue": "jobs", "reason": "delivery_limit", "time": T0 + 5_000, "routing_keys": ["jobs"]}])
    h["x-delivery-count"] = 20
    recs.append(record("jobs.dlq", dict(sorted(h.items())), '{"job":"resize","image":42}',
                       {"content_type": "application/json", "correlation_id": "batch-7", "type": "image.resize"},
                       exchange="dlx", rk="jobs"))
    # Rejected twice, then expired: merged entries, newest first.
    h = xdeath([{"queue": "emails.retry", "reason": "expired", "time": T0 + 6_000, "count": 2,
                 "routing_keys": ["emails"]},
                {"queue": "emails", "reason": "rejected", "time": T0 + 1_000, "count": 3,
                 "exchange": "mail", "routing_keys": ["emails.send"]}])
    recs.append(record("emails.error", dict(sorted(h.items())), b"\x1f\x8b\x08\x00" + bytes(20),
                       {"content_type": "application/json", "content_encoding": "gzip"},
                       exchange="dlx", rk="emails", binary=True))
    # Nothing at all: no properties, no headers, a binary body.
    recs.append(record("misc-dlq", None, bytes([0xde, 0xad, 0xbe, 0xef, 0x00, 0xff]), {}, rk="", binary=True))
    return recs


def hostile():
    recs = []
    esc = "\x1b[2J\x1b[H\x1b]0;pwned\x07"
    recs.append(record("evil.dlq", acemq("id-" + esc, "type\x1b[31mred", "corr\r\nInjected: yes", T0,
                                          error="boom \x1b]52;c;cm0gLXJmIH4=\x07 \u202eevil\u202c"),
                       "body \x1b[6n \x9b31m"))
    recs.append(record("evil.dlq", {"x-acemq-id": typed("bytes", "ok"), "x-acemq-attempt": {"nested": True},
                                     "x-acemq-version": "NaN", "x-acemq-first-seen": typed("double", "Infinity"),
                                     "x-acemq-type": ["array", "type"], "x-acemq-correlation": None},
                       "wrong header types"))
    recs.append(record("evil.dlq", {"x-acemq-id": {"type": "string", "base64": base64.b64encode(b"\xff\xfe\x00id").decode()},
                                     "x-acemq-error": {"type": "bytes", "base64": base64.b64encode(b"\xc0\xaf\xed\xa0\x80").decode()}},
                       b"\xff\xfe\xfd", binary=True))
    recs.append(record("evil.dlq", {"x-death": "not an array", "x-delivery-count": "many",
                                     "x-first-death-queue": typed("int8", 3)}, "bad death"))
    recs.append(record("evil.dlq", {"x-death": [1, "two", {"count": "x", "time": "yesterday",
                                                         "routing-keys": "rk", "queue": typed("bytes", "q")}]},
                       "bad death entries"))
    recs.append(record("evil.dlq", {}, '{"job":"urn:babel:x:y","trace_id":"t","data":{"n":18446744073709551616},'
                                       '"meta":{"id":"m","queue":"q","lang":"go","schema_version":1,"created_at":1},"attempts":0}',
                       {"content_type": "application/json", "app_id": "babelqueue"}))
    recs.append(record("evil.dlq", {}, '{"job":"  ","meta":[],"data":[],"trace_id":"","attempts":-1}',
                       {"app_id": "babelqueue"}))
    deep = "leaf"
    for _ in range(60):
        deep = {"d": deep}
    recs.append(record("evil.dlq", {"deep": deep}, "deeply nested header"))
    recs.append(record("evil.dlq", {"long": "A" * 20000}, "x" * 70000,
                       {"content_type": "text/plain", "message_id": "\u202e" + "gnp.exe"}))
    recs.append(record("evil.dlq", {"x-acemq-id": "cyc-a", "x-acemq-correlation": "cyc", "x-acemq-causation": "cyc-b"}, "cycle a"))
    recs.append(record("evil.dlq", {"x-acemq-id": "cyc-b", "x-acemq-correlation": "cyc", "x-acemq-causation": "cyc-a"}, "cycle b"))
    recs.append(record("evil.dlq", {"x-acemq-id": "self", "x-acemq-causation": "self"}, "self cause"))
    recs.append(record("evil.dlq", {}, "\u0000\u0007\u0008 control bytes in text",
                       {"content_type": "text/plain"}))
    return recs


def write(name, recs):
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    write("incident.jsonl", incident())
    write("hostile.jsonl", hostile())
