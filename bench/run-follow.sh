#!/bin/sh
# run-follow.sh: does `dlqx follow` keep up with a flood of dead letters? Against a private
# RabbitMQ node.
#
#   bench/run-follow.sh [quick|full] [BUILD_DIR]
#
# quick (~1 min): 50,000 dead letters a round, 2 rounds of each; full (~3 min): 100,000, 3.
# Each round: dlqx-seed --scenario flood declares flood (x-message-ttl 0) -> flood.dlx ->
# flood.dlq under a fresh prefix; a reader is started on it; then dlqx-seed publishes COUNT
# messages of 256 bytes with confirms, as fast as the broker takes them, and the broker
# dead-letters each at once, at its own rate. The readers, alternating:
#   baseline  bench/follow_bench tap: a bare rabbitmq-c no-ack consumer of a tap like dlqx's
#             (same arguments, same binding), reading each delivery whole and dropping it;
#   dlqx      dlqx follow --json flood.dlq, its output counted by follow_bench lines (a pipe
#             read in 64 KiB blocks: next to nothing beside the JSON it counts).
# Both count arrivals until COUNT, or 3 s after the last one: a reader slower than the flood
# lets the tap overflow (x-max-length 10000 drops the oldest) and receives fewer than COUNT.
# Printed: each round's flood rate (dlqx-seed's, publish to last confirm), what arrived, the
# rate from the first arrival to the last and the reader's CPU time; then dlqx's median rate
# over the baseline's, and over the flood's.
#
# The binaries: BUILD_DIR (the second argument or $DLQX_BUILD) /dlqx, /dlqx-seed and
# /bench/follow_bench; else a release build of its own in $TMPDIR.
set -eu

mode=${1:-quick}
case $mode in
quick) count=50000 rounds=2 ;;
full) count=100000 rounds=3 ;;
*) echo "usage: $0 [quick|full] [BUILD_DIR]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-${DLQX_BUILD:-}}
if [ -z "$build" ]; then
    build=${TMPDIR:-/tmp}/dlqx-follow-bench-build
    [ -f "$build/build.ninja" ] || meson setup "$build" "$root" -Dbuildtype=release >/dev/null
fi
ninja -C "$build" dlqx dlqx-seed bench/follow_bench >/dev/null
dlqx=$build/dlqx seed=$build/dlqx-seed fb=$build/bench/follow_bench

echo "== run-follow $mode: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%M:%SZ), $count x 256 B a round"
. "$root/bench/broker.sh"
bench_broker_start run-follow
work=$(mktemp -d)
fpid=
cleanup_work() {
    [ -n "$fpid" ] && kill "$fpid" 2>/dev/null
    rm -rf "$work"
    bench_cleanup
}
trap cleanup_work EXIT
mgmt_delete() { # path
    printf 'user = "dlqx:%s"\n' "$(cat "$DLQX_PASSWORD_FILE")" |
        curl -q -s -K - -o /dev/null --max-time 30 -X DELETE "${DLQX_MGMT_URL}api/$1"
}
await() { # file, text: until the file holds it (30 s at most)
    i=0
    while ! grep -q "$2" "$1" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 300 ] || { echo "run-follow: no \"$2\" in $1:" >&2; cat "$1" >&2; exit 1; }
        sleep 0.1
    done
}
rate() { sed -n 's/.* \([0-9]*\) msg\/s.*/\1/p' "$1"; }

round=0
for r in $(seq 1 "$rounds"); do
    for who in baseline dlqx; do
        round=$((round + 1))
        p=fb$round-
        "$seed" --scenario flood --count 0 --prefix $p >/dev/null
        rm -f "$work/ready" "$work/out"
        if [ $who = baseline ]; then
            "$fb" tap ${p}flood.dlx ${p}flood.dlq "$count" >"$work/out" 2>"$work/ready" &
            cpid=$!
            await "$work/ready" ready
        else
            rm -f "$work/fifo"
            mkfifo "$work/fifo"
            "$fb" lines "$count" <"$work/fifo" >"$work/out" &
            cpid=$!
            "$dlqx" follow --json ${p}flood.dlq >"$work/fifo" 2>"$work/ready" &
            fpid=$!
            await "$work/ready" 'Ctrl-C ends it'
        fi
        "$seed" --scenario flood --count "$count" --size 256 --prefix $p >"$work/seed"
        wait "$cpid"
        cpu=
        if [ -n "$fpid" ]; then
            # dlqx follow's own CPU time (user + system), before it ends
            cpu=$(awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$fpid/stat")
            kill -INT "$fpid"
            wait "$fpid" || true
            fpid=
        fi
        flood=$(sed -n 's/.*(\([0-9]*\) msg\/s, confirmed).*/\1/p' "$work/seed")
        [ -z "$cpu" ] && cpu=$(sed -n 's/.*cpu \([0-9.]*\) s.*/\1/p' "$work/out")
        echo "round $r $who: flood $flood msg/s; $(cat "$work/out")"
        [ $who = dlqx ] && echo "round $r dlqx: dlqx follow itself: cpu $cpu s"
        us=$(awk -v c="$cpu" -v n="$count" 'BEGIN { printf "%.1f", c * 1e6 / n }')
        echo "$who $(rate "$work/out") $flood $us" >>"$work/rates"
        for q in ${p}flood ${p}flood.dlq; do mgmt_delete "queues/%2F/$q"; done
        mgmt_delete "exchanges/%2F/${p}flood.dlx"
    done
done
median() { grep "^$1 " "$work/rates" | cut -d' ' -f"$2" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
b=$(median baseline 2) d=$(median dlqx 2) f=$(median dlqx 3)
bu=$(median baseline 4) du=$(median dlqx 4)
awk -v b="$b" -v d="$d" -v f="$f" -v bu="$bu" -v du="$du" 'BEGIN {
    rb = (b > 0) ? d / b : 0
    rf = (f > 0) ? d / f : 0
    ru = (bu > 0) ? du / bu : 0
    printf "median: dlqx follow %d msg/s, bare consumer %d msg/s: ratio %.2f; flood %d msg/s: dlqx/flood %.2f\n", d, b, rb, f, rf
    printf "median CPU a message: dlqx follow %.1f us, bare consumer %.1f us: ratio %.1f\n", du, bu, ru
}'
