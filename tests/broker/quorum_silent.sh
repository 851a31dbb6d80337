#!/bin/sh
# A quorum DLQ whose leader does not answer for a moment. RabbitMQ then answers a passive
# declare with 0 messages and 0 consumers (rabbit_quorum_queue:stat's {ok, 0, 0} on a timeout),
# as it does for a node that has just started (the cluster test's "selected 0 of 20000"). The
# leader's Ra process is suspended (sys:suspend through rabbitmqctl eval) for 3 s and dlqx
# started as soon as the broker says 0: a peek must read every message and a move must move
# every one, not end at once on "empty". An empty quorum queue nobody reads is still taken as
# empty, after 5 s, and said to be unsure (count_unsure).
# Needs the test broker's environment (run.sh): DLQX_BROKER_DIR, DLQX_SOURCE_ROOT, DLQX_SEED.
# usage: quorum_silent.sh DLQX
set -u
dlqx=$1
root=${DLQX_SOURCE_ROOT:?}
dir=${DLQX_BROKER_DIR:?}
seed=${DLQX_SEED:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
password=$(head -n 1 "$DLQX_PASSWORD_FILE")
. "$(dirname "$0")/check.sh"
# dlqx without the management API (the type from --type): the passive declare is all it asks,
# as in the cluster test. The script's own requests (mgmt) still use the API.
nomgmt() { DLQX_MGMT_URL='' "$@"; }
P=qs-
N=300
dlq=${P}flood.dlq
target=${P}target
empty=${P}empty
clean() { for q in "$dlq" "${P}flood" "$target" "$empty"; do mgmt DELETE "queues/%2F/$q" >/dev/null; done; }
clean # an earlier run's, stopped midway

"$seed" --scenario flood --count $N --size 128 --queue-type quorum --prefix "$P" >"$tmp/seed.out" 2>&1 ||
  { cat "$tmp/seed.out"; echo "FAIL quorum-silent: seeding"; exit 1; }
full() { [ "$(depth "$dlq")" = $N ]; }
wait_for 100 full ||
  { echo "FAIL quorum-silent: $dlq did not reach $N"; exit 1; }

zero() { [ "$(depth "$dlq")" = 0 ]; }
silent() { # COMMAND...: runs it while the DLQ's leader is suspended, for 3 s in all
  # One rabbitmqctl call suspends the queue's Ra server (its leader: the only member on one
  # node), holds it 3 s and resumes it, so that the CLI's own start-up (seconds on a loaded
  # machine) is not part of the silence. The premise: the broker says 0 while it lasts.
  "$root/scripts/broker" ctl "$dir" eval \
    "P = whereis('%2F_$dlq'), ok = sys:suspend(P), timer:sleep(3000), sys:resume(P)." \
    >"$tmp/ra.out" 2>&1 &
  ra=$!
  wait_for 300 zero || {
    wait $ra
    cat "$tmp/ra.out"
    echo "FAIL quorum-silent: the premise: the suspended queue never said 0"
    exit 1
  }
  "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  wait $ra
  grep -q '^ok' "$tmp/ra.out" || { cat "$tmp/ra.out"; echo "FAIL quorum-silent: suspending the leader failed"; exit 1; }
}
expect() { # NAME CONDITION...
  e_name=$1
  shift
  if "$@"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL quorum-silent: $e_name"
    cat "$tmp/out" "$tmp/err"
  fi
}

# Peek: every message, the count before the real one.
silent nomgmt "$dlqx" peek "$dlq" --type quorum --report "$tmp/rep.json" -o "$tmp/peek.jsonl"
expect "peek exits 0 (exit $rc)" [ "$rc" -eq 0 ]
expect "the peek saw the silence: its plan says 0 ready" grep -q "quorum queue, 0 messages ready" "$tmp/err"
expect "peek read all $N ($(wc -l <"$tmp/peek.jsonl"))" [ "$(wc -l <"$tmp/peek.jsonl")" -eq $N ]
expect "peek: ready_before $N, count_unsure false" sh -c "tr -d ' \n' <'$tmp/rep.json' | grep -q '\"ready_before\":$N,.*\"count_unsure\":false'"
expect "the DLQ still holds $N after the peek" [ "$(depth "$dlq")" = $N ]

# Move: every dead letter, in order.
[ "$(mgmt PUT "queues/%2F/$target" '{"durable":true,"arguments":{"x-queue-type":"quorum"}}')" = 201 ] || {
  # no management API here: dlqx-seed declares nothing of this name, so the move would refuse
  echo "FAIL quorum-silent: could not declare $target"
  exit 1
}
silent nomgmt "$dlqx" move "$dlq" --all --to-queue "$target" --type quorum --yes --json --journal "$tmp/j.jsonl"
expect "move exits 0 (exit $rc)" [ "$rc" -eq 0 ]
expect "move: done $N, count_unsure false" grep -q "\"done\":$N,.*\"count_unsure\":false" "$tmp/out"
expect "the target holds $N" [ "$(depth "$target")" = $N ]
expect "the DLQ is empty" [ "$(depth "$dlq")" = 0 ]
"$dlqx" peek "$target" --type quorum -o "$tmp/target.jsonl" >/dev/null 2>&1
"$dlqx" decode "$tmp/peek.jsonl" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' >"$tmp/ids.before"
"$dlqx" decode "$tmp/target.jsonl" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p' >"$tmp/ids.after"
expect "the target holds the same ids in the same order" cmp -s "$tmp/ids.before" "$tmp/ids.after"

# An empty quorum queue nobody reads: empty, after asking for 5 s, and unsure.
mgmt PUT "queues/%2F/$empty" '{"durable":true,"arguments":{"x-queue-type":"quorum"}}' >/dev/null
t0=$(date +%s.%N)
check "peek of an empty quorum queue" 0 'peek again' nomgmt "$dlqx" peek "$empty" --type quorum --report "$tmp/e.json" -o "$tmp/e.jsonl"
t1=$(date +%s.%N)
expect "the empty queue was asked for about 5 s" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 4.5 && b - a < 30) }'
expect "the peek's report: count_unsure" sh -c "tr -d ' \n' <'$tmp/e.json' | grep -q '\"count_unsure\":true'"
check "move of an empty quorum queue" 0 '"count_unsure":true' \
  nomgmt "$dlqx" move "$empty" --all --to-queue "$target" --type quorum --yes --json --journal "$tmp/j2.jsonl"

# Ctrl-C while the pass asks the empty queue again: the wait is a step of the pass's loop (the
# explorer's screen is not held), so the signal ends it at once, not after the 5 s.
t_start=$(date +%s.%N)
DLQX_MGMT_URL= "$dlqx" move "$empty" --all --to-queue "$target" --type quorum --yes --json \
  --journal "$tmp/j3.jsonl" >"$tmp/out" 2>"$tmp/err" </dev/null &
mv_pid=$!
# The signal once the pass has begun (its run record is in the journal: it catches SIGINT by
# then; a background job of sh starts with SIGINT ignored), half a second into the wait.
begun() { grep -q '"kind":"run"' "$tmp/j3.jsonl" 2>/dev/null; }
wait_for 300 begun || { cat "$tmp/err"; echo "FAIL quorum-silent: the move never began"; exit 1; }
sleep 0.5
t0=$(date +%s.%N)
kill -s INT $mv_pid
wait $mv_pid
rc=$?
t1=$(date +%s.%N)
expect "Ctrl-C during the count's wait: ended within 2 s of the signal" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 2) }'
# (A pass that waits in replay_start journals its run only after the 5 s: then it is over
# before the signal, its run record and all.)
expect "Ctrl-C during the count's wait: the whole move took under 4.8 s" awk -v a="$t_start" -v b="$t1" 'BEGIN { exit !(b - a < 4.8) }'
expect "Ctrl-C during the count's wait: the pass says cancelled (exit $rc)" grep -q '"end":"cancelled"' "$tmp/out"
expect "Ctrl-C during the count's wait: its end is journaled" grep -q '"kind":"end"' "$tmp/j3.jsonl"

clean
echo "quorum-silent: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
