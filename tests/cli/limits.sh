#!/bin/sh
# CLI tests of the record size limit and of running out of memory, on files made here (a
# 100 MB record is not committed): [small, 100 MB, small] read under `ulimit -v 150000`.
#
#   - at the default limit (64 MiB) the big record is reported with FILE:LINE and its size,
#     and skipped; the third record is still read; exit 65;
#   - DLQX_MAX_RECORD sets the limit as --max-record-size does, and a bad value is a usage
#     error (2) before anything is read;
#   - with the limit raised to 1G the big record cannot be held in 150 MB: a clear "out of
#     memory" error, exit 71 (never a crash, never exit 0 with records missing).
#
# usage: limits.sh DLQX
set -u
dlqx=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DLQX_NOW=1767330000000 TZ=UTC LC_ALL=C.UTF-8
unset DLQX_MAX_RECORD
fail=0
pass=0

check() { # NAME CONDITION-TEXT: $? of the condition is in $ok
  if [ "$ok" -eq 0 ]; then
    pass=$((pass + 1))
  else
    echo "FAIL $1: $2"
    echo "  exit $rc; stderr:"
    sed 's/^/    /' "$tmp/err" | cut -c1-200 | head -5
    fail=$((fail + 1))
  fi
}

f=$tmp/three.jsonl
{
  echo '{"queue":"q","properties":{"message_id":"first"},"body":"ok"}'
  printf '{"queue":"q","properties":{"message_id":"big"},"body":"'
  head -c 100000000 /dev/zero | tr '\0' 'x'
  printf '"}\n'
  echo '{"queue":"q","properties":{"message_id":"third"},"body":"ok"}'
} >"$f"

# ulimit -v does not mix with AddressSanitizer's shadow memory or valgrind.
if [ -n "${DLQX_WRAPPER:-}" ] || nm -a "$dlqx" 2>/dev/null | grep -q __asan_init; then
  echo "limits: skipped (ulimit -v cannot run under a sanitizer or valgrind)"
  exit 77
fi

# 1. The default limit, under 150 MB of address space.
(ulimit -v 150000 && exec "$dlqx" decode "$f") >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 65 ]; ok=$?; check default-limit "exit 65 expected"
grep -q "three.jsonl:2: a record of 100000057 bytes is over the record size limit (64 MiB; raise it with --max-record-size or DLQX_MAX_RECORD) (record skipped)" "$tmp/err"
ok=$?; check default-limit "the error names the file, the line, the size and the limit"
[ "$(grep -c '"id":"first"' "$tmp/out")" -eq 1 ] && [ "$(grep -c '"id":"third"' "$tmp/out")" -eq 1 ]
ok=$?; check default-limit "the first and the third records are read"

# 2. The environment sets the limit; a bad value is a usage error.
DLQX_MAX_RECORD=100 "$dlqx" cat "$f" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 65 ] && [ "$(wc -l <"$tmp/out")" -eq 2 ] && grep -q "limit (100 bytes;" "$tmp/err"
ok=$?; check env-limit "DLQX_MAX_RECORD=100: two records, exit 65"
DLQX_MAX_RECORD=lots "$dlqx" decode "$f" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q 'DLQX_MAX_RECORD: "lots" is not a size' "$tmp/err"
ok=$?; check env-bad "DLQX_MAX_RECORD=lots: exit 2, nothing read"
DLQX_MAX_RECORD=lots "$dlqx" replay orders.dlq --snapshot "$f" --all --dry-run >"$tmp/out" \
  2>"$tmp/err"
rc=$?
[ "$rc" -eq 66 ] && grep -q 'DLQX_MAX_RECORD: "lots" is not a size' "$tmp/err" &&
  ! grep -q "selected" "$tmp/out" "$tmp/err"
ok=$?; check env-bad-replay "replay --snapshot with DLQX_MAX_RECORD=lots: no plan, exit 66"

# 3. The limit raised past the memory there is: out of memory, exit 71, no crash.
for cmd in decode tree cat; do
  (ulimit -v 150000 && exec "$dlqx" "$cmd" --max-record-size 1G "$f") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 71 ]; ok=$?; check "oom-$cmd" "exit 71 expected"
  grep -q "out of memory" "$tmp/err"; ok=$?; check "oom-$cmd" "the error says out of memory"
done
# Reading the line is where it runs out here: that record is skipped and the third is read.
(ulimit -v 150000 && exec "$dlqx" decode --max-record-size 1G "$f") >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q "three.jsonl:2: out of memory reading a record of 100000057 bytes" "$tmp/err" &&
  [ "$(grep -c '"id":"third"' "$tmp/out")" -eq 1 ]
ok=$?; check oom-goes-on "the record that did not fit is named and the third is still read"

# 4. The explorer running out of memory (jansson's allocations, a record of 3,000,000 short
# strings) exits 71 and, once the terminal is restored, shows why: the message was written
# to the captured standard error and lost at exit before.
if command -v tmux >/dev/null 2>&1; then
  g=$tmp/wide.jsonl
  {
    echo '{"queue":"q","properties":{"message_id":"first"},"body":"ok"}'
    printf '{"queue":"q","properties":{"message_id":"wide"},"headers":{"h":['
    yes '"yyyyyyyyyy",' | head -n 3000000 | tr -d '\n'
    printf '"y"]},"body":"x"}\n'
  } >"$g"
  sock=$tmp/tmux.sock
  tmux -S "$sock" -f /dev/null new-session -d -s oom -x 100 -y 10 \
    "ulimit -v 300000; TERM=tmux-256color '$dlqx' open '$g'; echo \"[dlqx exited \$?]\"; sleep 60"
  for _ in $(seq 1 300); do
    tmux -S "$sock" capture-pane -p -t oom 2>/dev/null | grep -q 'dlqx exited' && break
    sleep 0.1
  done
  tmux -S "$sock" capture-pane -p -t oom >"$tmp/err" 2>/dev/null
  tmux -S "$sock" kill-server 2>/dev/null
  rc=$(sed -n 's/.*\[dlqx exited \([0-9]*\)\].*/\1/p' "$tmp/err")
  [ "$rc" = 71 ] && grep -q "dlqx: out of memory" "$tmp/err"
  ok=$?; check oom-explorer "the explorer: exit 71 and 'out of memory' on the terminal after it"
fi

echo "limits: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
