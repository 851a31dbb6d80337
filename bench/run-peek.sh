#!/bin/sh
# run-peek.sh: the snapshot (peek) benchmarks against a private RabbitMQ node.
#
#   bench/run-peek.sh [quick|full]
#
# quick (a smoke test, < 2 min): rate with 20,000 x 1 KB, rss with 100,000 x 1 KB.
# full (the figures in bench/README.md): rate with 100,000 x 1 KB, rss with 1,000,000 x 1 KB.
# It starts a node with scripts/broker, runs peek_bench rate and then peek_bench rss as a
# separate process (so that the rate run's baseline, which holds every body, cannot inflate
# the rss run's peak), and stops the node whatever happens. It prints every figure; it exits
# non-zero only when something failed — a missed target is printed as "below target".
#
# The binary: $PEEK_BENCH if set, else BUILD_DIR/bench/peek_bench when BUILD_DIR (the second
# argument or $DLQX_BUILD) is given, else a release build of its own in $TMPDIR.
set -eu

mode=${1:-quick}
case $mode in
quick) rate_count=20000 rate_rounds=3 rss_count=100000 window=1000 ;;
full) rate_count=100000 rate_rounds=5 rss_count=1000000 window=5000 ;;
*) echo "usage: $0 [quick|full] [BUILD_DIR]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-${DLQX_BUILD:-}}

if [ -n "${PEEK_BENCH:-}" ]; then
    bin=$PEEK_BENCH
elif [ -n "$build" ]; then
    bin=$build/bench/peek_bench
    ninja -C "$build" bench/peek_bench >/dev/null
else
    build=${TMPDIR:-/tmp}/dlqx-peek-bench-build
    if [ ! -f "$build/build.ninja" ]; then
        meson setup "$build" "$root" -Dbuildtype=release >/dev/null
    fi
    ninja -C "$build" bench/peek_bench >/dev/null
    bin=$build/bench/peek_bench
fi
[ -x "$bin" ] || { echo "run-peek: no peek_bench at $bin" >&2; exit 1; }

echo "== run-peek $mode: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
. "$root/bench/broker.sh"
bench_broker_start run-peek

failed=0
echo "== peek_bench rate --count $rate_count --size 1024 --rounds $rate_rounds"
"$bin" rate --count "$rate_count" --size 1024 --rounds "$rate_rounds" --window "$window" ||
    { echo "run-peek: the rate benchmark FAILED"; failed=1; }
echo "== peek_bench rss --count $rss_count --size 1024 (a process of its own)"
"$bin" rss --count "$rss_count" --size 1024 --window "$window" ||
    { echo "run-peek: the rss benchmark FAILED"; failed=1; }
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_cleanup
exit $failed
