#!/bin/sh
# CLI tests: run the real dlqx binary on the fixtures and compare what it prints with the
# expected files beside each case (jq-style: the tests are data).
#
#   cases/NAME.cmd    the arguments after `dlqx`, one shell line ($FIXTURES is the fixtures dir)
#   cases/NAME.stdin  optional standard input
#   cases/NAME.out    expected standard output
#   cases/NAME.err    optional expected standard error
#   cases/NAME.rc     optional expected exit code (default 0)
#
# usage: run.sh DLQX CASES_DIR [--update]
# --update rewrites the expected files from what dlqx prints now (review the diff!).
set -u
dlqx=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$2
update=${3:-}
fixtures=${DLQX_FIXTURES:-$(cd "$dir/../../fixtures" && pwd)}
export DLQX_NOW=1767330000000 TZ=UTC LC_ALL=C.UTF-8
unset LANG LC_CTYPE NO_COLOR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
dir=$(cd "$dir" && pwd)
for cmd in "$dir"/cases/*.cmd; do
  name=$(basename "$cmd" .cmd)
  base="$dir/cases/$name"
  args=$(cat "$cmd")
  stdin=/dev/null
  [ -f "$base.stdin" ] && stdin="$base.stdin"
  # Run from the fixtures directory so that file names in messages do not depend on
  # where the checkout is.
  FIXTURES=.
  eval "set -- $args"
  # DLQX_WRAPPER runs the binary under a tool (valgrind in scripts/test).
  (cd "$fixtures" && ${DLQX_WRAPPER:-} "$dlqx" "$@") <"$stdin" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$update" = "--update" ]; then
    cp "$tmp/out" "$base.out"
    if [ -s "$tmp/err" ]; then cp "$tmp/err" "$base.err"; else rm -f "$base.err"; fi
    if [ "$rc" -ne 0 ]; then echo "$rc" >"$base.rc"; else rm -f "$base.rc"; fi
  fi
  want_rc=0
  [ -f "$base.rc" ] && want_rc=$(cat "$base.rc")
  ok=1
  if [ "$rc" -ne "$want_rc" ]; then
    echo "FAIL $name: exit code $rc, expected $want_rc"
    ok=0
  fi
  if ! cmp -s "$tmp/out" "$base.out"; then
    echo "FAIL $name: standard output differs:"
    diff -u "$base.out" "$tmp/out" | head -40
    ok=0
  fi
  if [ -f "$base.err" ]; then
    if ! cmp -s "$tmp/err" "$base.err"; then
      echo "FAIL $name: standard error differs:"
      diff -u "$base.err" "$tmp/err" | head -20
      ok=0
    fi
  elif [ -s "$tmp/err" ]; then
    echo "FAIL $name: unexpected standard error:"
    head -5 "$tmp/err"
    ok=0
  fi
  # Whatever dlqx prints for people — standard output and standard error alike — must never
  # carry a raw control byte other than newline, a C1 control (U+0080-U+009F, which many
  # terminals obey as ESC sequences) or bytes that are not UTF-8: a message must not be able
  # to drive the terminal.
  for stream in out err; do
    if LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$tmp/$stream"; then
      echo "FAIL $name: a raw control byte reached standard $stream"
      ok=0
    fi
    if LC_ALL=C grep -q "$(printf '\302[\200-\237]')" "$tmp/$stream"; then
      echo "FAIL $name: a raw C1 control reached standard $stream"
      ok=0
    fi
    if ! iconv -f UTF-8 -t UTF-8 "$tmp/$stream" >/dev/null 2>&1; then
      echo "FAIL $name: standard $stream is not valid UTF-8"
      ok=0
    fi
  done
  if [ $ok -eq 1 ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
  fi
done
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
