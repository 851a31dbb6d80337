#!/usr/bin/python3
"""The copies a replay or re-issue wrote, compared with the expected records.

usage: dialects_compare.py queues FILE
           the distinct queues the records of FILE name, in order, one a line
       dialects_compare.py compare EXPECTED JOURNAL RECORDS TARGET.jsonl...
           EXPECTED and each TARGET (a peek of the queue, in the order `queues EXPECTED` named
           them) in the canonical snapshot form (`dlqx cat`); JOURNAL the run's journal;
           RECORDS how many dead letters the run had to handle.

Each copy must equal its expected record exactly: the delivery's exchange and routing key,
the properties, the headers (name, kind, value and order; duplicates count) and the body.
In an expected string (a property, a header value at any depth, the body text) the
placeholders "<uuid>" (any UUID), "<rfc3339>" (any RFC 3339 time) and "<any>" (any text) stand
for what cannot be known in advance. The expected record's queue names the target queue; the
copies there must be exactly the expected ones, in order. Every run in the journal (one per DLQ)
must have ended, and together they must have done every dead letter (none kept or unknown).

Exit status 0 when all is equal; 1 with a diff on standard output otherwise.
"""
import difflib
import json
import re
import sys

UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
RFC3339 = (r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?"
           r"([Zz]|[+-][0-9]{2}:[0-9]{2})")
HOLE = re.compile(r"<uuid>|<rfc3339>|<any>")
IGNORED = {"v", "queue", "redelivered", "fetched_at_ms", "stream_offset"}


class Obj(list):
    """A JSON object as its members in order (duplicates kept)."""


def load(path):
    records = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    records.append(json.loads(line, object_pairs_hook=Obj))
                except ValueError as e:
                    sys.exit("%s:%d: %s" % (path, n, e))
    return records


def member(obj, key, default=None):
    for k, v in obj:
        if k == key:
            return v
    return default


def text_matches(want, got):
    if not HOLE.search(want):
        return want == got
    parts, pos = [], 0
    for m in HOLE.finditer(want):
        parts.append(re.escape(want[pos:m.start()]))
        parts.append({"<uuid>": UUID, "<rfc3339>": RFC3339, "<any>": ".*"}[m.group(0)])
        pos = m.end()
    parts.append(re.escape(want[pos:]))
    return re.fullmatch("".join(parts), got, re.S) is not None


def same(want, got):
    """Exact equality, except placeholders in the expected strings."""
    if isinstance(want, str):
        return isinstance(got, str) and text_matches(want, got)
    if isinstance(want, Obj):
        return (isinstance(got, Obj) and len(want) == len(got) and
                all(kw == kg and same(vw, vg) for (kw, vw), (kg, vg) in zip(want, got)))
    if isinstance(want, list):
        return (isinstance(got, list) and not isinstance(got, Obj) and len(want) == len(got)
                and all(same(a, b) for a, b in zip(want, got)))
    # bool is an int in Python: the type must be the same too
    return type(want) is type(got) and want == got


def differences(want, got):
    """What differs, as (where, expected, actual) triples."""
    out = []
    keys = [k for k, _ in want if k not in IGNORED]
    keys += [k for k, _ in got if k not in IGNORED and k not in keys]
    for k in keys:
        w, g = member(want, k), member(got, k)
        if k == "properties":
            w, g = dict(w or []), dict(g or [])
            for p in sorted(set(w) | set(g)):
                if p not in g or p not in w or not same(w[p], g[p]):
                    out.append(("properties." + p, w.get(p, "(absent)"), g.get(p, "(absent)")))
        elif k == "headers":
            w, g = w if w is not None else "(absent)", g if g is not None else "(absent)"
            if isinstance(w, str) or isinstance(g, str):
                if not (isinstance(w, str) and isinstance(g, str)):
                    out.append(("headers", w, g))
                continue
            if [n for n, _ in w] != [n for n, _ in g]:
                out.append(("headers (names in order)", [n for n, _ in w], [n for n, _ in g]))
            for i, (n, v) in enumerate(w):
                if i < len(g) and g[i][0] == n and not same(v, g[i][1]):
                    out.append(("headers." + n, v, g[i][1]))
        elif (w is None) != (g is None) or (w is not None and not same(w, g)):
            out.append((k, w, g))
    return out


def pretty(rec):
    def plain(v):
        if isinstance(v, Obj):
            return {"{%d} %s" % (i, k): plain(x) for i, (k, x) in enumerate(v)}
        if isinstance(v, list):
            return [plain(x) for x in v]
        return v
    return json.dumps(plain(Obj(x for x in rec if x[0] not in IGNORED)), indent=1,
                      ensure_ascii=False).splitlines()


def sent_to(path):
    """Where the journal's intents say the copies went."""
    try:
        targets = [dict(member(r, "target") or []) for r in load(path)
                   if member(r, "kind") == "intent"]
    except (OSError, SystemExit):
        return ""
    named = sorted({"exchange \"%s\" routing key \"%s\"" % (t.get("exchange", ""),
                                                            t.get("routing_key", ""))
                    for t in targets})
    return " (the run sent its copies to %s)" % ", ".join(named) if named else ""


def check_journal(path, records):
    """Every run (one per DLQ the case names) ended, and together they did every dead letter:
    none kept, none unknown."""
    try:
        journal = load(path)
    except OSError as e:
        return ["the journal cannot be read: %s" % e]
    runs = [member(r, "run") for r in journal if member(r, "kind") == "run"]
    ends = {member(r, "run"): dict(r) for r in journal if member(r, "kind") == "end"}
    problems = []
    if not runs:
        problems.append("the journal holds no run")
    for run in runs:
        if run not in ends:
            problems.append("run %s has no end record: it did not finish" % run)
    done = kept = unknown = 0
    for end in ends.values():
        counts = dict(end.get("counts") or [])
        done += counts.get("done", 0)
        kept += counts.get("kept", 0)
        unknown += counts.get("unknown", 0)
        if counts.get("kept") or counts.get("unknown"):
            problems.append("run %s ended with %s (%s)"
                            % (end.get("run"), json.dumps(counts), end.get("how")))
    if runs and (done, kept, unknown) != (records, 0, 0):
        problems.append("the runs did %d of the %d dead letters (kept %d, unknown %d)"
                        % (done, records, kept, unknown))
    if journal and member(journal[-1], "kind") != "end":
        problems.append("the journal's last record is not a run's end")
    return problems


def compare(expected_path, journal, nrecords, targets):
    expected = load(expected_path)
    queues = []
    for r in expected:
        q = member(r, "queue", "")
        if q not in queues:
            queues.append(q)
    if len(targets) != len(queues):
        sys.exit("%d target snapshots for %d target queues" % (len(targets), len(queues)))
    failed = []
    for q, path in zip(queues, targets):
        want = [r for r in expected if member(r, "queue", "") == q]
        got = load(path)
        if len(got) != len(want):
            failed.append("queue %s holds %d copies, expected %d%s"
                          % (q, len(got), len(want), sent_to(journal)))
        for i, (w, g) in enumerate(zip(want, got), 1):
            diff = differences(w, g)
            if diff:
                lines = ["copy %d in queue %s differs from %s:" % (i, q, expected_path)]
                for where, a, b in diff:
                    lines.append("  %s\n    expected %s\n    actual   %s"
                                 % (where, json.dumps(a, ensure_ascii=False),
                                    json.dumps(b, ensure_ascii=False)))
                lines.extend("  " + d for d in difflib.unified_diff(
                    pretty(w), pretty(g), "expected", "actual", lineterm="", n=2))
                failed.append("\n".join(lines))
    failed.extend(check_journal(journal, nrecords))
    for f in failed:
        print(f)
    return 1 if failed else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "queues":
        seen = []
        for r in load(argv[2]):
            q = member(r, "queue", "")
            if q not in seen:
                seen.append(q)
                print(q)
        return 0
    if len(argv) >= 5 and argv[1] == "compare":
        return compare(argv[2], argv[3], int(argv[4]), argv[5:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
