#!/usr/bin/env python3
"""Test-only: compares the copies read back from a target queue (a `dlqx peek` snapshot) with
a fixture's .replay.jsonl / .reissue.jsonl, as tests/broker/dialects_live.sh does: properties,
headers (name, kind, value, order) and body exactly, except "<uuid>", "<rfc3339>", "<any>".
Give both in dlqx's canonical form (`dlqx cat`), so that a kind is written one way.
   python3 replay-compare.py <(dlqx cat EXPECTED.jsonl) <(dlqx cat GOT.jsonl)"""
import json, re, sys

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")

def same(want, got, path, errs):
    if isinstance(want, str) and want in ("<uuid>", "<rfc3339>", "<any>"):
        ok = want == "<any>" or (isinstance(got, str) and (UUID if want == "<uuid>" else TIME).match(got))
        if not ok: errs.append(f"{path}: want {want}, got {got!r}")
        return
    if isinstance(want, dict) and isinstance(got, dict):
        ordered = " headers" in path  # header tables keep their order; properties have none
        if (list(want) if ordered else sorted(want)) != (list(got) if ordered else sorted(got)):
            errs.append(f"{path}: keys {list(want)} != {list(got)}")
        for k in want:
            if k in got: same(want[k], got[k], f"{path}.{k}", errs)
        return
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (a, b) in enumerate(zip(want, got)): same(a, b, f"{path}[{i}]", errs)
        return
    if want != got: errs.append(f"{path}: want {want!r:.120}, got {got!r:.120}")

def load(p):
    return [json.loads(l) for l in open(p) if l.strip()]

want, got = load(sys.argv[1]), load(sys.argv[2])
errs = []
if len(want) != len(got): errs.append(f"{len(want)} expected copies, {len(got)} read")
for i, (w, g) in enumerate(zip(want, got)):
    for k in ("properties", "headers", "body", "body_base64"):
        if k in w or k in g: same(w.get(k), g.get(k), f"copy {i + 1} {k}", errs)
print("\n".join(errs) if errs else f"ok: {len(want)} copies")
sys.exit(1 if errs else 0)
