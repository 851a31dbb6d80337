#!/usr/bin/env bash
# Replay and re-issue of every framework's dead letters on the test broker (run.sh), each copy
# compared with what the framework's own tool writes.
#
# For each fixtures/<framework>/<case>.jsonl that has a <case>.replay.jsonl (and, separately,
# a <case>.reissue.jsonl) beside it:
#   1. a virtual host of its own (so that cases never collide: the queue names come from the
#      messages' headers, where a prefix cannot reach), deleted afterwards;
#   2. dlqx-seed --scenario file publishes the case's records to their DLQs as recorded and
#      declares the expected record's queues (bound to their exchange by their routing key);
#   3. dlqx replay DLQ --all --yes (--reissue) for each DLQ the case names, with
#      DLQX_NOW=1767330000000 (the fixtures' fixed now: 2026-01-02T05:00:00Z);
#   4. dlqx peek of each target queue, compared with the expected records exactly
#      (dialects_compare.py: properties, headers by name, kind, value and order, body,
#      exchange and routing key; "<uuid>", "<rfc3339>", "<any>" in expected strings);
#   5. every DLQ is empty (the dead letters were removed after the confirms) and the journal's
#      run ended with every dead letter done.
# Fails when any case fails, or when there is no case at all.
#
# usage: dialects_live.sh DLQX [FIXTURES]   (FIXTURES: $DLQX_FIXTURES, else the source tree's)
# DLQX_CASES: an extended regular expression; only the cases whose <framework>/<case>.<mode>
# matches it run (for debugging).
set -u
dlqx=$1
seed=${DLQX_SEED:?}
fixtures=${2:-${DLQX_FIXTURES:-${DLQX_SOURCE_ROOT:?}/fixtures}}
compare="/usr/bin/python3 $(dirname "$0")/dialects_compare.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
password=$(cat "$DLQX_PASSWORD_FILE")
. "$(dirname "$0")/check.sh"
user=${DLQX_BROKER_USER:-dlqx}
base=${DLQX_URL%/*}
# The replays run with the fixtures' fixed clock, so that a time a copy takes from the clock
# (a re-issue's first-seen, a replay stamp) can be expected exactly; "<rfc3339>" still works.
now=1767330000000

cases=0 failed=0
fail_case() {
  echo "FAIL $name: $*"
  bad=1
}

run_case() { # case-file expected-file mode
  local case=$1 expected=$2 mode=$3 dir vhost url q i n rc d
  name=${case#"$fixtures"/}
  name=${name%.jsonl}.$mode
  dir=$tmp/$cases
  mkdir -p "$dir"
  bad=0
  vhost=dlx-$cases-$(printf '%s' "$name" | tr -c 'a-zA-Z0-9.-' '-')
  vhost=${vhost:0:200}
  rc=$(mgmt PUT "vhosts/$vhost")
  [ "$rc" = 201 ] || [ "$rc" = 204 ] || { fail_case "creating vhost $vhost: HTTP $rc"; return; }
  rc=$(mgmt PUT "permissions/$vhost/$user" '{"configure":".*","write":".*","read":".*"}')
  [ "$rc" = 201 ] || [ "$rc" = 204 ] || { fail_case "permissions on $vhost: HTTP $rc"; return; }
  url=$base/$vhost
  export DLQX_URL=$url DLQX_JOURNAL=$dir/journal.jsonl

  if ! "$dlqx" cat "$expected" >"$dir/expected.jsonl" 2>"$dir/cat.err"; then
    fail_case "the expected copies do not read:"
    cat "$dir/cat.err"
  elif ! "$seed" --scenario file --from "$case" --declare "$expected" >"$dir/seed.out" 2>&1; then
    fail_case "dlqx-seed could not publish the case:"
    cat "$dir/seed.out"
  else
    n=$("$dlqx" cat "$case" 2>/dev/null | grep -c .)
    $compare queues "$case" >"$dir/dlqs"
    while read -r q; do
      if [ "$mode" = reissue ]; then set -- --reissue; else set --; fi
      DLQX_NOW=$now "$dlqx" replay "$q" --all --yes "$@" >"$dir/replay.out" 2>&1 </dev/null
      rc=$?
      [ $rc -eq 0 ] || { fail_case "dlqx replay $q exited $rc:"; cat "$dir/replay.out"; }
    done <"$dir/dlqs"
    i=0
    set --
    while read -r q; do
      i=$((i + 1))
      if ! "$dlqx" peek "$q" -o "$dir/target-$i.jsonl" >"$dir/peek.out" 2>&1 </dev/null; then
        fail_case "dlqx peek $q (a target) failed:"
        cat "$dir/peek.out"
        : >"$dir/target-$i.jsonl"
      fi
      set -- "$@" "$dir/target-$i.jsonl"
    done < <($compare queues "$dir/expected.jsonl")
    $compare compare "$dir/expected.jsonl" "$DLQX_JOURNAL" "$n" "$@" >"$dir/diff" 2>&1 ||
      { fail_case "the copies are not the expected ones:"; cat "$dir/diff"; }
    while read -r q; do
      "$dlqx" peek "$q" -o "$dir/left.jsonl" >/dev/null 2>&1 </dev/null
      d=$(grep -c . "$dir/left.jsonl" 2>/dev/null)
      [ "${d:-x}" = 0 ] || fail_case "the DLQ $q still holds ${d:-?} messages after the run"
    done <"$dir/dlqs"
  fi
  rc=$(mgmt DELETE "vhosts/$vhost")
  [ "$rc" = 204 ] || echo "note: deleting vhost $vhost: HTTP $rc"
  if [ $bad -eq 0 ]; then
    echo "ok   $name"
    pass=$((pass + 1))
  else
    failed=$((failed + 1))
  fi
}

for mode in replay reissue; do
  for expected in "$fixtures"/*/*."$mode".jsonl; do
    [ -f "$expected" ] || continue
    case=${expected%."$mode".jsonl}.jsonl
    rel=${expected#"$fixtures"/}
    if [ -n "${DLQX_CASES:-}" ] && ! printf '%s\n' "${rel%.jsonl}" | grep -Eq -- "$DLQX_CASES"; then
      continue
    fi
    cases=$((cases + 1))
    if [ ! -f "$case" ]; then
      echo "FAIL $rel: there is no $(basename "$case") beside it"
      failed=$((failed + 1))
      continue
    fi
    run_case "$case" "$expected" "$mode"
  done
done

echo "dialects_live: $cases cases from $fixtures: $pass passed, $failed failed"
[ "$cases" -gt 0 ] || { echo "FAIL no case ran (no <case>.replay.jsonl or .reissue.jsonl)"; exit 1; }
[ "$failed" -eq 0 ]
