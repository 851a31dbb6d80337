#!/usr/bin/env bash
# A writing pass stopped by a signal settles before it exits: Ctrl-C (SIGINT), SIGTERM and
# SIGHUP (the SSH session dropped) each stop a `dlqx move` mid-way; it sends nothing more,
# settles the copies in flight, journals the run's end and exits 20 (some were not sent).
# Then nothing is pending in the journal, and the DLQ plus the target hold every message once.
# Needs the test broker's environment (run.sh): DLQX_SEED.
# usage: signals.sh DLQX
set -u
dlqx=$1
seed=${DLQX_SEED:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DLQX_JOURNAL=$tmp/journal.jsonl
. "$(dirname "$0")/check.sh" # pass, fail, depth, journal_count
ok() { pass=$((pass + 1)); }
bad() {
  echo "FAIL signals: $*"
  fail=$((fail + 1))
}
P=${DLQX_SIGNALS_PREFIX:-s-}
count=300
"$seed" --scenario bulk --count $count --size 128 --prefix "$P" >"$tmp/seed.out" 2>&1 ||
  { cat "$tmp/seed.out"; echo "FAIL signals: seeding"; exit 1; }
dlq=${P}bulk.dlq
target=${P}signal-target

first=--create-queue
for sig in INT TERM HUP; do
  before_dlq=$(depth "$dlq")
  before_target=$(depth "$target")
  before_target=${before_target:-0}
  before_intents=$(journal_count intent)
  before_ends=$(journal_count end)
  # 20 copies a second: the signal comes while the pass is sending.
  "$dlqx" move "$dlq" --all --to-queue "$target" $first --yes --rate 20 \
    >"$tmp/$sig.out" 2>"$tmp/$sig.err" &
  pid=$!
  first=
  await_intent $pid "$before_intents"
  sleep 0.5
  kill -s "$sig" $pid
  wait $pid
  rc=$?
  if [ $rc -eq 20 ]; then ok; else bad "SIG$sig: exit $rc, expected 20 (some not sent)"; cat "$tmp/$sig.err"; fi
  if [ "$(journal_count end)" -eq $((before_ends + 1)) ]; then ok; else bad "SIG$sig: the run's end is not in the journal"; fi
  "$dlqx" journal --pending >"$tmp/pending" 2>&1
  prc=$?
  if [ $prc -eq 0 ]; then ok; else bad "SIG$sig: intents left pending (journal --pending exit $prc)"; cat "$tmp/pending"; fi
  after_dlq=$(depth "$dlq")
  after_target=$(depth "$target")
  moved=$((after_target - before_target))
  if [ "$moved" -ge 1 ] && [ "$after_dlq" -ge 1 ]; then ok; else
    bad "SIG$sig: not stopped mid-way ($moved moved, $after_dlq left)"
  fi
  if [ $((after_dlq + moved)) -eq "$before_dlq" ]; then ok; else
    bad "SIG$sig: $before_dlq before, $after_dlq left and $moved moved"
  fi
done
if [ $((after_dlq + after_target)) -eq $count ]; then ok; else bad "$after_dlq + $after_target is not $count"; fi
echo "signals: $pass passed, $fail failed"
[ $fail -eq 0 ]
