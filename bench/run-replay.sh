#!/bin/sh
# run-replay.sh: the bulk-replay benchmark against a private RabbitMQ node.
#
#   bench/run-replay.sh [quick|full] [BUILD_DIR]
#
# quick (a smoke test, ~6-8 min with the shovel rounds): 20,000 x 1 KB per pass.
# full (the figures in bench/README.md, ~20-25 min): 100,000 x 1 KB per pass.
# One replay_bench process runs every pass on the same node, each on a DLQ freshly filled by
# dlqx-seed: (a) the libraries' way (one confirm per message, plain rabbitmq-c), (b) dlqx's
# replay_run with window 1, (c) replay_run with its default window (1000) and with 2000, and
# (r) 3 rounds of RabbitMQ's own dynamic shovel (ack-mode on-confirm; the rabbitmq_shovel
# plugin is enabled on the node), dlqx replay, dlqx move and a bare pipelined mover (the floor
# any AMQP client reaches, bench/replay_floor.c), in rotated order, with the ratios to the shovel.
# It starts a node with scripts/broker, stops it whatever happens, prints every figure, and
# exits non-zero only when something failed — a missed target is printed as "below target".
#
# The binaries: $REPLAY_BENCH and $DLQX_SEED if set, else BUILD_DIR/bench/replay_bench and
# BUILD_DIR/dlqx-seed when BUILD_DIR (the second argument or $DLQX_BUILD) is given, else a
# release build of its own in $TMPDIR. $REPLAY_BENCH_ARGS is passed on (e.g. "--w1-count
# 20000" to keep the window-1 pass short, or "--windows 0,1000,2000").
set -eu

mode=${1:-quick}
case $mode in
quick) count=20000 ;;
full) count=100000 ;;
*) echo "usage: $0 [quick|full] [BUILD_DIR]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-${DLQX_BUILD:-}}

if [ -n "${REPLAY_BENCH:-}" ]; then
    bin=$REPLAY_BENCH
    seedbin=${DLQX_SEED:-$(dirname "$bin")/../dlqx-seed}
else
    if [ -z "$build" ]; then
        build=${TMPDIR:-/tmp}/dlqx-replay-bench-build
        if [ ! -f "$build/build.ninja" ]; then
            meson setup "$build" "$root" -Dbuildtype=release >/dev/null
        fi
    fi
    ninja -C "$build" bench/replay_bench dlqx-seed >/dev/null
    bin=$build/bench/replay_bench
    seedbin=${DLQX_SEED:-$build/dlqx-seed}
fi
[ -x "$bin" ] || { echo "run-replay: no replay_bench at $bin" >&2; exit 1; }
[ -x "$seedbin" ] || { echo "run-replay: no dlqx-seed at $seedbin" >&2; exit 1; }

echo "== run-replay $mode: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
. "$root/bench/broker.sh"
bench_broker_start run-replay
# RabbitMQ's own move, the anchor of the shovel rounds: the plugin ships with the server.
"$root/scripts/broker" plugins "$dir" enable rabbitmq_shovel rabbitmq_shovel_management >/dev/null ||
    { echo "run-replay: cannot enable rabbitmq_shovel on the node" >&2; exit 1; }
export DLQX_BROKER_DIR DLQX_BROKER_USER
echo "== uptime: $(uptime)"

failed=0
# shellcheck disable=SC2086 # REPLAY_BENCH_ARGS is a list of words
echo "== replay_bench --count $count --size 1024 ${REPLAY_BENCH_ARGS:-}"
"$bin" --count "$count" --size 1024 --seed-bin "$seedbin" ${REPLAY_BENCH_ARGS:-} ||
    { echo "run-replay: the benchmark FAILED"; failed=1; }
# What the broker said about connections it closed (a missed heartbeat, for instance).
if [ -n "${DLQX_BROKER_LOG:-}" ] && [ -f "$DLQX_BROKER_LOG" ]; then
    closed=$(grep -E "\[(warning|error)\]" "$DLQX_BROKER_LOG" | grep -iE "heartbeat|connection" | tail -8 || true)
    if [ -n "$closed" ]; then
        echo "== the broker's log on closed connections (last 8):"
        printf '%s\n' "$closed" | cut -c1-300
    fi
fi
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); uptime: $(uptime)"
bench_cleanup
exit $failed
