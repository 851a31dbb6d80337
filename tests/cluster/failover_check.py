#!/usr/bin/env python3
"""tests/cluster/failover_check.py N PREFIX REPORT PENDING TARGET_SNAPSHOT DLQ_SNAPSHOT LABEL
                                  [JOURNAL KILLED_AT]

After one round of tests/cluster/replay_failover.sh: checks that the target queue plus the DLQ
hold every one of the N dead letters (ids PREFIX0000001..), that each id present twice is
named by the journal's pending intents, that the report's counts agree with what the queues
hold, and that the dead letters left are in their order. Prints one `ok`/`FAIL` line per check
and one `figures` line (attempts, unknown, re-sent, duplicates and, given the journal and
the epoch seconds the node was killed or paused at, the seconds from then to the first copy
done by the next attempt); exit status 1 on a FAIL."""
import datetime
import json
import sys


def back_after(journal, killed_at):
    """Seconds from killed_at to the first outcome `done` of the second attempt's intents."""
    first_seq, at = None, None
    with open(journal, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break
            rec = json.loads(line)
            if rec.get("kind") == "attempt" and rec.get("attempt") == 2:
                first_seq = rec["next_seq"]
            elif (first_seq and rec.get("kind") == "outcome" and rec.get("result") == "done"
                  and rec.get("seq", 0) >= first_seq):
                at = rec["at"]
                break
    if not at:
        return None
    t = datetime.datetime.strptime(at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    return t - killed_at


def ids_of(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line).get("properties", {}).get("message_id", "?"))
    return out


def main():
    n, prefix, report_p, pending_p, target_p, dlq_p, label = sys.argv[1:8]
    n = int(n)
    fails = 0

    def check(cond, what):
        nonlocal fails
        print(("ok   " if cond else "FAIL ") + label + ": " + what)
        if not cond:
            fails += 1

    with open(report_p, encoding="utf-8") as f:
        rep = json.loads(f.read().strip().splitlines()[-1])
    pending, n_pending = set(), 0
    with open(pending_p, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                n_pending += 1
                oid = json.loads(line).get("old_id")
                if isinstance(oid, str):
                    pending.add(oid)
    target, dlq = ids_of(target_p), ids_of(dlq_p)
    want = {"%s%07d" % (prefix, i) for i in range(1, n + 1)}
    held = set(target) | set(dlq)
    lost = sorted(want - held)
    check(not lost, "every one of the %d dead letters is in the target or the DLQ%s" % (
        n, "" if not lost else " — %d lost, the first %s" % (len(lost), lost[:3])))
    seen = {}
    for i in target + dlq:
        seen[i] = seen.get(i, 0) + 1
    twice = sorted(i for i, k in seen.items() if k > 1)
    unnamed = [i for i in twice if i not in pending]
    check(not unnamed, "each of the %d ids held twice is pending in the journal%s" % (
        len(twice), "" if not unnamed else " — not named: %s" % unnamed[:5]))
    done, unknown = rep["done"], rep["unknown"]
    kept, not_sent = rep["kept"], rep["not_sent"]
    resent, selected = rep.get("resent", 0), rep["selected"]
    check(done <= len(target) <= done + unknown,
          "the target holds %d: between done %d and done + unknown %d" % (
              len(target), done, done + unknown))
    gone = n - len(dlq)
    check(done <= gone <= done + unknown,
          "%d dead letters left the DLQ: between done %d and done + unknown %d" % (
              gone, done, done + unknown))
    check(selected == n and done + kept + unknown + not_sent == selected + resent,
          "selected %d of %d; done %d + kept %d + unknown %d + not sent %d = selected + "
          "re-sent %d" % (selected, n, done, kept, unknown, not_sent, resent))
    check(dlq == sorted(dlq), "the %d dead letters left in the DLQ are in their order" % len(dlq))
    # Every outcome unknown is pending, and nothing else is: an intent that was never
    # published has its outcome (kept), one whose removal was proven is done.
    check(n_pending == unknown and unknown >= len(twice),
          "pending %d = unknown %d, no fewer than the %d duplicates" % (
              n_pending, unknown, len(twice)))
    back = None
    if len(sys.argv) > 9:
        back = back_after(sys.argv[8], float(sys.argv[9]))
    print("figures %s: attempts %d, done %d, unknown %d, re-sent %d, duplicates %d, "
          "target %d, dlq %d, seconds %.1f, back after %s s" % (
              label, rep.get("attempts", 1), done, unknown, resent, len(twice), len(target),
              len(dlq), rep.get("seconds", 0), "?" if back is None else "%.2f" % back))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
