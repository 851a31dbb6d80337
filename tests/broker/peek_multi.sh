#!/bin/sh
# dlqx peek of several queues at once (src/cli/peek_multi.c), against the test broker
# (run.sh): three DLQs peeked at once give, each, the snapshot a peek of it alone gives (byte
# for byte, with DLQX_NOW fixed and every message already redelivered once), each with its
# report, and the queues are intact after (depth, and the ids in order); a missing queue among
# them is reported (15) while the others are peeked; the quorum delivery-limit refusal of one
# queue (16, its .partial kept) does not touch the others; SIGTERM stops every peek and each
# queue gets its messages back; the usage errors.
set -u
dlqx=$1
seed=${DLQX_SEED:?DLQX_SEED is the dlqx-seed program}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
password=$(cat "$DLQX_PASSWORD_FILE")
. "$(dirname "$0")/check.sh"
ok() { # name, condition (a shell test), what failed
  if eval "$2"; then pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
ids() { # the message ids of a snapshot, in order
  sed 's/.*"message_id":"\([^"]*\)".*/\1/' "$1"
}

n1=3000 n2=1500 n3=700
"$seed" --scenario bulk --count $n1 --size 256 --prefix pm1. >"$tmp/seed" 2>&1 &&
  "$seed" --scenario bulk --count $n2 --size 512 --prefix pm2. >>"$tmp/seed" 2>&1 &&
  "$seed" --scenario bulk --count $n3 --size 2048 --prefix pm3. >>"$tmp/seed" 2>&1 &&
  "$seed" --scenario bulk --count 200 --size 256 --queue-type quorum --prefix pmq. >>"$tmp/seed" 2>&1 ||
  { echo "FAIL seed:"; tail -5 "$tmp/seed"; exit 1; }
qs="pm1.bulk.dlq pm2.bulk.dlq pm3.bulk.dlq"

# Each queue alone first (every message is then redelivered, as it will be for the rest).
for q in $qs; do
  "$dlqx" peek "$q" -o "$tmp/first.$q.jsonl" 2>/dev/null || echo "FAIL first peek of $q"
done
export DLQX_NOW=1796000000000
# shellcheck disable=SC2086 # qs is a list of names without spaces
check three-at-once 0 '3 queues at once' "$dlqx" peek $qs -o "$tmp/multi"
for q in $qs; do
  "$dlqx" peek "$q" -o "$tmp/alone.$q.jsonl" 2>/dev/null
  ok "same-as-alone-$q" 'cmp -s "$tmp/alone.$q.jsonl" "$tmp/multi/$q.jsonl"' \
    "the snapshot of $q peeked with others differs from a peek of it alone"
  ok "report-$q" 'grep -q "\"end\": \"complete\"" "$tmp/multi/$q.report.json"' \
    "no complete report for $q"
  ok "order-$q" '[ "$(ids "$tmp/first.$q.jsonl")" = "$(ids "$tmp/alone.$q.jsonl")" ]' \
    "the ids of $q are not those it had before, in the same order"
done
ok depths '[ "$(depth pm1.bulk.dlq) $(depth pm2.bulk.dlq) $(depth pm3.bulk.dlq)" = "$n1 $n2 $n3" ]' \
  "the depths after are $(depth pm1.bulk.dlq) $(depth pm2.bulk.dlq) $(depth pm3.bulk.dlq)"
ok counts '[ "$(wc -l <"$tmp/multi/pm1.bulk.dlq.jsonl") $(wc -l <"$tmp/multi/pm3.bulk.dlq.jsonl")" = "$n1 $n3" ]' \
  "the snapshots do not hold every message"

# A missing queue among them: 15, said, the others peeked all the same.
check missing-among 15 'there is no queue "pm.no.such"' \
  "$dlqx" peek pm1.bulk.dlq pm.no.such pm3.bulk.dlq -o "$tmp/missing"
ok missing-others 'cmp -s "$tmp/alone.pm1.bulk.dlq.jsonl" "$tmp/missing/pm1.bulk.dlq.jsonl" && cmp -s "$tmp/alone.pm3.bulk.dlq.jsonl" "$tmp/missing/pm3.bulk.dlq.jsonl"' \
  "the queues beside a missing one were not peeked whole"
ok missing-no-file '[ ! -e "$tmp/missing/pm.no.such.jsonl" ] && [ ! -e "$tmp/missing/pm.no.such.report.json" ]' \
  "a missing queue left a file"

# The quorum delivery limit: the quorum queue stops at its first message (16, kept as
# .partial), the classic one beside it is complete; the highest exit code is the command's.
check limit-among 16 'refused-delivery-limit\|delivery limit' \
  "$dlqx" peek pm2.bulk.dlq pmq.bulk.dlq -o "$tmp/limit" --delivery-limit 1
ok limit-partial '[ "$(wc -l <"$tmp/limit/pmq.bulk.dlq.jsonl.partial")" -eq 1 ] && [ ! -e "$tmp/limit/pmq.bulk.dlq.jsonl" ]' \
  "the refused quorum peek did not keep its one message as .partial"
ok limit-other 'cmp -s "$tmp/alone.pm2.bulk.dlq.jsonl" "$tmp/limit/pm2.bulk.dlq.jsonl"' \
  "the classic queue beside the refused one was not peeked whole"
ok limit-depth '[ "$(depth pmq.bulk.dlq)" = 200 ]' "the quorum queue holds $(depth pmq.bulk.dlq), not 200"

# SIGTERM: every peek stops and gives back (18: incomplete), every queue intact.
"$seed" --scenario bulk --count 40000 --size 128 --prefix pmbig. >>"$tmp/seed" 2>&1 ||
  echo "FAIL seed of the big queue"
"$dlqx" peek pmbig.bulk.dlq pm1.bulk.dlq pm2.bulk.dlq -o "$tmp/term" 2>"$tmp/term.err" &
pid=$!
wait_for 300 grep -q 'pm2.bulk.dlq on' "$tmp/term.err"
sleep 0.3
kill -TERM $pid
wait $pid
rc=$?
ok term-exit '[ $rc -eq 18 ] && grep -q "stopping" "$tmp/term.err"' \
  "SIGTERM: exit $rc (expected 18): $(tail -3 "$tmp/term.err")"
ok term-depths '[ "$(depth pmbig.bulk.dlq) $(depth pm1.bulk.dlq) $(depth pm2.bulk.dlq)" = "40000 $n1 $n2" ]' \
  "after SIGTERM the depths are $(depth pmbig.bulk.dlq) $(depth pm1.bulk.dlq) $(depth pm2.bulk.dlq)"
ok term-no-snapshot '[ ! -e "$tmp/term/pmbig.bulk.dlq.jsonl" ]' \
  "a stopped peek left a complete-looking snapshot"

# Usage: a directory, no --report, a name once.
check no-dir 2 'several queues need -o DIR' "$dlqx" peek pm1.bulk.dlq pm2.bulk.dlq
check no-report 2 'no --report' "$dlqx" peek pm1.bulk.dlq pm2.bulk.dlq -o "$tmp/x" --report "$tmp/r"
check twice 2 'named twice' "$dlqx" peek pm1.bulk.dlq pm1.bulk.dlq -o "$tmp/x"
check idle-timeout-bad 2 "idle-timeout takes seconds" "$dlqx" peek pm1.bulk.dlq --idle-timeout 0
: >"$tmp/file"
check not-a-dir 74 'is not a directory' "$dlqx" peek pm1.bulk.dlq pm2.bulk.dlq -o "$tmp/file"

echo "peek-multi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
