#!/usr/bin/env bash
# read-rate: the snapshot reader's speed held to what it was measured at, as a ratio to the
# same run's own baseline — `jq -c .` re-printing the same file — never an absolute time, so a
# slower or busier machine moves both. The file: tests/screen/gensnap's mix, 20,000 records
# (~12 MB). Each command is timed in CPU seconds (user + system), best of 3; its ratio
# jq / dlqx must stay at least half of the ratio recorded below (bench/README.md, "Reading
# snapshots", has the runs they come from).
# usage: tests/read_rate.sh DLQX GENSNAP
set -u
dlqx=$1 gensnap=$2
n=${READ_RATE_N:-20000}
command -v jq >/dev/null || { echo "read-rate: jq is missing (scripts/deps installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
snap=$tmp/snap.jsonl
"$gensnap" "$n" >"$snap" || { echo "read-rate: gensnap failed"; exit 1; }
export DLQX_NOW=1767330000000 LC_ALL=C

# cpu_ms CMD...: the best of 3 runs, in CPU milliseconds (user + system).
cpu_ms() {
  local best=999999999 t
  for _ in 1 2 3; do
    t=$( { TIMEFORMAT='%3U %3S'; time "$@" >/dev/null 2>"$tmp/err"; } 2>&1 ) ||
      { echo "read-rate: $* failed: $(head -c 300 "$tmp/err")"; exit 1; }
    t=$(awk '{printf "%d", ($1 + $2) * 1000}' <<<"$t")
    [ "$t" -lt "$best" ] && best=$t
  done
  echo "$best"
}

# The recorded ratios jq / dlqx (CPU), in hundredths, of this branch's debug-optimised build (the one
# meson test runs) on the development VM; half the recorded ratio leaves room for noise. The
# lower of two runs at h-read's a5a1cc5, 2026-12-07 01:16 UTC, load 7-9 (bench/README.md,
# "Reading snapshots"): decode 3.23/3.41, cat 8.45/7.98, tree 5.03/4.39, table 3.93/3.60,
# groups 4.63/4.85.
declare -A recorded=([decode]=320 [cat]=790 [tree]=430 [table]=360 [groups]=460)
jq_ms=$(cpu_ms jq -c . "$snap")
echo "read-rate: $n records, $(($(stat -c %s "$snap") / 1000)) kB; jq -c . ${jq_ms} ms CPU"
failed=0
for name in decode cat tree table groups; do
  case $name in
  table) args=(decode --format table) ;;
  *) args=("$name") ;;
  esac
  ms=$(cpu_ms "$dlqx" "${args[@]}" "$snap")
  [ "$ms" -ge 1 ] || ms=1
  ratio=$((jq_ms * 100 / ms))
  floor=$((recorded[$name] / 2))
  verdict=ok
  if [ "$ratio" -lt "$floor" ]; then
    verdict="TOO SLOW (below half the recorded $((recorded[$name])))"
    failed=1
  fi
  printf '  %-22s %6d ms CPU  jq/dlqx %d.%02d  (floor %d.%02d)  %s\n' "dlqx ${args[*]}" "$ms" \
    $((ratio / 100)) $((ratio % 100)) $((floor / 100)) $((floor % 100)) "$verdict"
done
[ "$failed" = 0 ] && echo "read-rate: 1 passed, 0 failed" || echo "read-rate: 0 passed, 1 failed"
exit "$failed"
