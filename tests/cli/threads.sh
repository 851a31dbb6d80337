#!/bin/sh
# decode on worker threads (src/cli/decode_par.c) against the serial path (DLQX_THREADS=1):
# the same standard output, standard error and exit code, byte for byte, for gensnap's mix
# (several batches), every fixture, malformed and oversized records in several batches,
# several inputs with stdin and a missing file, an empty file, --ascii, --utf8 and the
# table; and a write error (`| head -1`) ends both with the same exit code.
#
# usage: threads.sh DLQX GENSNAP FIXTURES
set -u
export DLQX_NOW=1767330000000 TZ=UTC LC_ALL=C.UTF-8
unset DLQX_MAX_RECORD DLQX_THREADS
dlqx=$1 gensnap=$2 fixtures=$3 pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# same NAME [ENV=VALUE...] -- ARGS...: decode ARGS serially and on 2 and 3 workers, compared
same() {
  name=$1
  shift
  envs=
  while [ "$1" != "--" ]; do
    envs="$envs $1"
    shift
  done
  shift
  env $envs DLQX_THREADS=1 "$dlqx" decode "$@" <"$stdin" >"$tmp/s.out" 2>"$tmp/s.err"
  echo $? >"$tmp/s.rc"
  for t in 2 3; do
    env $envs DLQX_THREADS=$t "$dlqx" decode "$@" <"$stdin" >"$tmp/p.out" 2>"$tmp/p.err"
    echo $? >"$tmp/p.rc"
    for k in out err rc; do
      if ! cmp -s "$tmp/s.$k" "$tmp/p.$k"; then
        echo "FAIL $name (DLQX_THREADS=$t): std$k differs from the serial path's"
        diff "$tmp/s.$k" "$tmp/p.$k" | head -5 | cut -c1-200
        fail=$((fail + 1))
        continue 2
      fi
    done
    pass=$((pass + 1))
  done
}
stdin=/dev/null

"$gensnap" 5000 >"$tmp/g.jsonl" || exit 1
same gensnap -- "$tmp/g.jsonl"
same gensnap-table -- --format table "$tmp/g.jsonl"
same gensnap-ascii -- --ascii "$tmp/g.jsonl"
same gensnap-utf8 -- --utf8 "$tmp/g.jsonl"
[ "$(wc -l <"$tmp/s.out")" -eq 5000 ] || { echo "FAIL gensnap: not 5000 records"; fail=$((fail + 1)); }

# Every fixture, all in one call each way (the files in turn, each on the workers: with
# DLQX_THREADS set a small file is threaded too), so 255 files cost six runs, not 1,530 (the
# test took 110 s under the sanitizers in CI).
fixture_files=$(find "$fixtures" -name '*.json' -o -name '*.jsonl' | sort)
# shellcheck disable=SC2086 # the names have no spaces (checked below)
same fixtures -- $fixture_files
# shellcheck disable=SC2086
same "fixtures (table)" -- --format table --ascii $fixture_files
case $fixture_files in *" "*) echo "FAIL fixtures: a name with a space"; fail=$((fail + 1)) ;; esac

# Malformed lines in several batches (of 1024 lines), an oversized one, blank ones, a BOM.
awk 'NR == 1 { printf "\357\273\277" }
     NR % 700 == 3 { print "{not json" }
     NR % 1100 == 5 { print "{\"queue\":7}" ; print "" }
     NR == 2500 { printf "{\"queue\":\"q\",\"body\":\""; for (i = 0; i < 600; i++) printf "xxxxxxxxxx"; print "\"}" }
     { print }' "$tmp/g.jsonl" >"$tmp/bad.jsonl"
same malformed -- "$tmp/bad.jsonl"
same malformed-table -- --format table "$tmp/bad.jsonl"
same oversized DLQX_MAX_RECORD=4096 -- "$tmp/bad.jsonl"
same oversized-option -- --max-record-size 2048 "$tmp/bad.jsonl"
grep -q 'bad.jsonl:2510: a record of 6023 bytes' "$tmp/s.err" || { echo "FAIL oversized: no FILE:LINE"; fail=$((fail + 1)); }

: >"$tmp/empty.jsonl"
same empty -- "$tmp/empty.jsonl"
stdin=$tmp/bad.jsonl
same several -- "$tmp/g.jsonl" - "$tmp/missing.jsonl" "$tmp/empty.jsonl" "$tmp/bad.jsonl"
same stdin -- -
same stdin-none --
stdin=/dev/null
same bad-limit DLQX_MAX_RECORD=lots -- "$tmp/g.jsonl"

# A write error: both stop with the same exit code (and no message for EPIPE).
for t in 1 2; do
  rc=$( (DLQX_THREADS=$t "$dlqx" decode "$tmp/g.jsonl" "$tmp/g.jsonl" 2>"$tmp/epipe$t.err"; echo $? >"$tmp/epipe$t.rc") | head -1 >/dev/null; cat "$tmp/epipe$t.rc")
  echo "$rc" >"$tmp/epipe$t.rc"
done
if cmp -s "$tmp/epipe1.rc" "$tmp/epipe2.rc" && cmp -s "$tmp/epipe1.err" "$tmp/epipe2.err" &&
  [ "$(cat "$tmp/epipe2.rc")" -ne 0 ]; then
  pass=$((pass + 1))
else
  echo "FAIL epipe: exit $(cat "$tmp/epipe1.rc") serially, $(cat "$tmp/epipe2.rc") on threads"
  fail=$((fail + 1))
fi

# A typo in DLQX_THREADS is a usage error, said on stderr, with nothing written (it was once
# taken for the default, and a small file then threaded as if the value were valid).
for v in abc 0 9 2x; do
  DLQX_THREADS=$v "$dlqx" decode --format table "$tmp/g.jsonl" >"$tmp/typo.out" 2>"$tmp/typo.err"
  rc=$?
  if [ $rc -eq 2 ] && [ ! -s "$tmp/typo.out" ] && grep -q "DLQX_THREADS is $v" "$tmp/typo.err"; then
    pass=$((pass + 1))
  else
    echo "FAIL DLQX_THREADS=$v: exit $rc, $(wc -c <"$tmp/typo.out") bytes out, $(head -c 200 "$tmp/typo.err")"
    fail=$((fail + 1))
  fi
done

echo "threads: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
