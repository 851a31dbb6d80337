#!/usr/bin/env bash
# run-read: how fast dlqx reads a snapshot, against jq re-printing the same file and against
# merely reading it (`cat FILE > /dev/null`), all in one run on one file.
#
# The file: tests/screen/gensnap's mix (AceMQ dead letters, ~585 bytes a record), 200,000
# records (~117 MB) in $TMPDIR. Each command reads it with its output to /dev/null; each is
# timed READ_BENCH_RUNS times and the best run kept. Printed per command: wall seconds, CPU
# seconds (user + system), MB/s of snapshot by each, and jq's time over the command's by each
# (above 1: faster than `jq -c .`; on a busy machine the CPU figures are the steadier). `dlqx groups` reads the file into the explorer's store
# (store_append_line, decoding every record, as the explorer's file source does), then groups.
#
# usage: bench/run-read.sh
# environment: DLQX (default build-release/dlqx, else build/dlqx), GENSNAP (default
#   build/tests/gensnap), READ_BENCH_N (records, default 200000), READ_BENCH_RUNS (default 3),
#   READ_BENCH_SNAPSHOT (use this file instead of generating one), DLQX_BEFORE (a second
#   dlqx, e.g. one built from main before this work, timed beside the first)
set -u
export LC_ALL=C
root=$(cd "$(dirname "$0")/.." && pwd)
dlqx=${DLQX:-}
if [ -z "$dlqx" ]; then
  dlqx=$root/build-release/dlqx
  [ -x "$dlqx" ] || dlqx=$root/build/dlqx
fi
gensnap=${GENSNAP:-$root/build/tests/gensnap}
[ -x "$gensnap" ] || gensnap=$root/build-release/tests/gensnap
n=${READ_BENCH_N:-200000}
runs=${READ_BENCH_RUNS:-3}
before=${DLQX_BEFORE:-}
command -v jq >/dev/null || { echo "run-read: jq is missing (apt-get install jq)" >&2; exit 2; }
[ -x "$dlqx" ] || { echo "run-read: $dlqx is missing (ninja -C build-release)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dlqx-read.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
snap=${READ_BENCH_SNAPSHOT:-}
if [ -z "$snap" ]; then
  [ -x "$gensnap" ] || { echo "run-read: gensnap is missing (ninja -C build)" >&2; exit 2; }
  snap=$tmp/snap.jsonl
  "$gensnap" "$n" >"$snap" || { echo "run-read: gensnap failed" >&2; exit 1; }
fi
bytes=$(stat -c %s "$snap")
export DLQX_NOW=1767330000000 # the same ages in every run

# best WALL CPU: the best of $runs runs of "$@" (output to /dev/null), in seconds.
best() {
  local w c bw=999999 bc=0 t0 t1 u0 u1 me=$BASHPID
  for ((i = 0; i < runs; i++)); do
    read -r u0 < <(awk '{print $14 + $15 + $16 + $17}' /proc/$me/stat)
    t0=${EPOCHREALTIME/[.,]/}
    "$@" >/dev/null 2>"$tmp/err" || { echo "run-read: $* failed: $(head -c 300 "$tmp/err")" >&2; exit 1; }
    t1=${EPOCHREALTIME/[.,]/}
    read -r u1 < <(awk '{print $14 + $15 + $16 + $17}' /proc/$me/stat)
    w=$(((t1 - t0) / 1000))
    c=$(((u1 - u0) * 1000 / $(getconf CLK_TCK)))
    if [ "$w" -lt "$bw" ]; then bw=$w bc=$c; fi
  done
  echo "$bw $bc"
}

printf 'run-read: %s, %d records, %.1f MB; best of %d runs; %s\n' "$(date -u +%FT%TZ)" \
  "$(wc -l <"$snap")" "$(echo "$bytes / 1000000" | bc -l)" "$runs" "$(uptime | sed 's/.*load/load/')"
read -r cat_w cat_c < <(best cat "$snap")
read -r jq_w jq_c < <(best jq -c . "$snap")
row() { # NAME WALL_MS CPU_MS
  local mbs mbc rw rc
  mbs=$(echo "$bytes / 1000 / ($2 + 0.001)" | bc -l)
  mbc=$(echo "$bytes / 1000 / ($3 + 0.001)" | bc -l)
  rw=$(echo "$jq_w / ($2 + 0.001)" | bc -l)
  rc=$(echo "$jq_c / ($3 + 0.001)" | bc -l)
  printf '  %-30s %6.2f s wall %6.2f s cpu %7.1f MB/s wall %7.1f MB/s cpu  jq/this %5.2f wall %5.2f cpu\n' \
    "$1" "$(echo "$2 / 1000" | bc -l)" "$(echo "$3 / 1000" | bc -l)" "$mbs" "$mbc" "$rw" "$rc"
}
row "cat FILE > /dev/null" "$cat_w" "$cat_c"
row "jq -c ." "$jq_w" "$jq_c"
for b in "$dlqx" $before; do
  label=$( [ "$b" = "$dlqx" ] && echo dlqx || echo before)
  for cmd in "decode" "cat" "tree" "decode --format table" "groups"; do
    # shellcheck disable=SC2086 # the command's words
    read -r w c < <(best "$b" $cmd "$snap")
    row "$label $cmd" "$w" "$c"
  done
done
