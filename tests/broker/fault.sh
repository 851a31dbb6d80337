#!/usr/bin/env bash
# Fault injection: replays of a few hundred AceMQ dead letters back to their source queue,
# with dlqx killed (SIGKILL) at random instants and the broker restarted once mid-run.
# Afterwards every original message is in the DLQ or its copy at the source — none lost —
# and every duplicate is one the journal names (an intent without an outcome, or "unknown").
# Needs the test broker's environment (run.sh): DLQX_BROKER_DIR, DLQX_SOURCE_ROOT, DLQX_SEED.
# usage: fault.sh DLQX [MESSAGES]
set -u
dlqx=$1
count=${2:-1500}
root=${DLQX_SOURCE_ROOT:?}
dir=${DLQX_BROKER_DIR:?}
seed=${DLQX_SEED:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DLQX_JOURNAL=$tmp/journal.jsonl
fail() {
  echo "FAIL fault: $*"
  exit 1
}
. "$(dirname "$0")/check.sh" # depth, journal_count
RANDOM=${DLQX_FAULT_SEED:-4242}
P=${DLQX_FAULT_PREFIX:-f-} # queues: f-bulk.dlq and its source f-bulk

"$seed" --scenario bulk --count "$count" --size 256 --prefix "$P" >"$tmp/seed.out" 2>&1 ||
  { cat "$tmp/seed.out"; fail "seeding"; }
dlq=${P}bulk.dlq
src=${P}bulk

ids() { # queue → its messages' ids, one a line (a peek: the queue keeps them)
  "$dlqx" peek "$1" -o "$tmp/peek.jsonl" >/dev/null 2>"$tmp/peek.err" || {
    cat "$tmp/peek.err"
    fail "peek $1"
  }
  "$dlqx" decode "$tmp/peek.jsonl" | sed -n 's/^{"dialect":"[a-z]*","id":"\([^"]*\)".*/\1/p'
}

ids "$dlq" | sort >"$tmp/before"
[ "$(wc -l <"$tmp/before")" -eq "$count" ] || fail "the DLQ holds $(wc -l <"$tmp/before") messages, expected $count"
[ "$(sort -u "$tmp/before" | wc -l)" -eq "$count" ] || fail "the seeded ids are not unique"

kills=0
restarted=0
rounds=0
while [ $rounds -lt 40 ]; do
  rounds=$((rounds + 1))
  d=$(depth "$dlq")
  [ -n "$d" ] || fail "cannot read the DLQ's depth"
  [ "$d" -eq 0 ] && break
  # --ignore-pending: each round replays what the killed one left, on purpose (a new pass
  # otherwise refuses while an interrupted run's intents are pending); the duplicates it may
  # make are what this test checks the journal names.
  # Ten kills, and more (up to round 30) until one has landed while a copy was in doubt:
  # at 150 copies a second a copy is in doubt for about half of the time. Asked before the
  # run starts (the journal then holds only the runs that ended or were killed).
  kill_this=0
  if [ $rounds -lt 12 ] || { [ $rounds -lt 30 ] && [ "$(pending_now)" -eq 0 ]; }; then
    kill_this=1
  fi
  before_run=$(journal_count intent)
  "$dlqx" replay "$dlq" --all --yes --window 32 --rate 150 --json --ignore-pending \
    >"$tmp/run$rounds.out" 2>"$tmp/run$rounds.err" &
  pid=$!
  if [ $rounds -eq 3 ]; then
    # The broker goes away under a running replay, and comes back.
    sleep 0.7
    "$root/scripts/broker" restart "$dir" >"$tmp/restart.log" 2>&1 ||
      { cat "$tmp/restart.log"; fail "the broker did not restart"; }
    wait $pid
    rc=$?
    [ $rc -eq 17 ] || [ $rc -eq 21 ] || { cat "$tmp/run$rounds.err"; fail "replay during the restart exited $rc, expected 17 or 21"; }
    restarted=1
    continue
  fi
  if [ $kill_this -eq 1 ]; then
    # Killed at a random instant of its sending: 0 to 1 s after its first intent is in the
    # journal (counted from the start instead, a slow start — a sanitizer build on a loaded
    # machine — let every kill land before the first copy, and the duplicate path went
    # untested).
    await_intent $pid "$before_run"
    ms=$((RANDOM % 1000))
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    kill -9 $pid 2>/dev/null && kills=$((kills + 1))
    wait $pid 2>/dev/null
  else
    wait $pid
  fi
done
[ $restarted -eq 1 ] || fail "the broker restart did not happen"
[ "$(depth "$dlq")" -eq 0 ] || fail "the DLQ was not drained after $rounds rounds"

# Every original is somewhere; duplicates are named.
ids "$dlq" >"$tmp/in_dlq"
ids "$src" >"$tmp/at_src"
sort "$tmp/in_dlq" "$tmp/at_src" >"$tmp/everywhere"
lost=$(sort -u "$tmp/everywhere" | comm -23 "$tmp/before" - | wc -l)
[ "$lost" -eq 0 ] || fail "$lost messages were lost: $(sort -u "$tmp/everywhere" | comm -23 "$tmp/before" - | head -5 | tr '\n' ' ')"
uniq -d "$tmp/everywhere" >"$tmp/dups"
"$dlqx" journal --pending --json >"$tmp/pending.jsonl" 2>"$tmp/journal.err"
sed -n 's/.*"old_id":"\([^"]*\)".*/\1/p' "$tmp/pending.jsonl" | sort -u >"$tmp/named"
unnamed=$(comm -23 "$tmp/dups" "$tmp/named" | wc -l)
[ "$unnamed" -eq 0 ] || fail "$unnamed duplicates the journal does not name: $(comm -23 "$tmp/dups" "$tmp/named" | head -5 | tr '\n' ' ')"
replays=$(grep -c '"kind":"outcome".*"result":"done"' "$DLQX_JOURNAL")
[ "$replays" -ge 200 ] || fail "only $replays replays were confirmed (at least 200 wanted)"
# The duplicate path must have been exercised: some kill landed while a copy was in doubt.
[ "$(wc -l <"$tmp/named")" -ge 1 ] || fail "no kill landed while a copy was in doubt (raise --rate or the kills)"
echo "ok fault: $count messages, $replays confirmed replays in $rounds runs, $kills killed with SIGKILL, the broker restarted once; none lost; $(wc -l <"$tmp/dups") duplicates, all named in the journal ($(wc -l <"$tmp/named") possible)"
