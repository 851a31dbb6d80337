#!/bin/sh
# run-peek-multi.sh: dlqx peek of N queues at once (one connection and channel each) against
# the same N queues peeked one after another, in the same run, on a private RabbitMQ node.
#
#   bench/run-peek-multi.sh [QUEUES [COUNT [ROUNDS [SIZE]]]]     (defaults 3 20000 3 1024)
#
# Seeds QUEUES classic DLQs of COUNT persistent SIZE-byte AceMQ dead letters (dlqx-seed bulk),
# then alternates rounds of "one after another" (dlqx peek Q -o FILE for each) and "at once"
# (dlqx peek Q1 .. QN -o DIR), timing each with its wall clock and the client's CPU (user +
# system of the dlqx processes), and checks after every round that each snapshot holds COUNT
# records and each queue COUNT messages. Prints every round, the medians and the ratio
# sequential/at-once (> 1: at once is faster). The binaries: $DLQX_BUILD (default: a release
# build of its own in $TMPDIR).
set -eu
nq=${1:-3} count=${2:-20000} rounds=${3:-3} size=${4:-1024}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DLQX_BUILD:-}
if [ -z "$build" ]; then
    build=${TMPDIR:-/tmp}/dlqx-peek-bench-build
    [ -f "$build/build.ninja" ] || meson setup "$build" "$root" -Dbuildtype=release >/dev/null
fi
ninja -C "$build" dlqx dlqx-seed >/dev/null
dlqx=$build/dlqx seed=$build/dlqx-seed
work=$(mktemp -d "${TMPDIR:-/tmp}/run-peek-multi.XXXXXX")

echo "== run-peek-multi: $nq queues x $count x $size B, $rounds rounds; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo ?)"
. "$root/bench/broker.sh"
trap 'bench_cleanup; rm -rf "$work"' EXIT
bench_broker_start run-peek-multi

qs=
i=1
while [ $i -le "$nq" ]; do
    t=$(date +%s.%N)
    "$seed" --scenario bulk --count "$count" --size "$size" --window 2000 --prefix "pmb$i." >"$work/seed.log" 2>&1 ||
        { tail -3 "$work/seed.log"; echo "run-peek-multi: the seed failed"; exit 1; }
    echo "seeded pmb$i.bulk.dlq: $count in $(echo "$(date +%s.%N) - $t" | bc) s"
    qs="$qs pmb$i.bulk.dlq"
    i=$((i + 1))
done

cpu() { # the CPU seconds (user + system) of the children so far
    awk '{print ($14 + $15 + $16 + $17) / 100}' /proc/$$/stat 2>/dev/null || echo 0
}
check() { # DIR-or-prefix: every snapshot complete and every queue intact
    for q in $qs; do
        f=$1$q.jsonl
        [ "$(wc -l <"$f")" -eq "$count" ] || { echo "run-peek-multi: $f has $(wc -l <"$f") records"; exit 1; }
        d=$("$dlqx" queues --no-mgmt --json "$q" 2>/dev/null | sed -n 's/.*"ready":\([0-9]*\).*/\1/p')
        [ "$d" -eq "$count" ] || { echo "run-peek-multi: $q holds $d"; exit 1; }
    done
}
seq_t= par_t=
r=1
while [ $r -le "$rounds" ]; do
    rm -rf "$work/s" "$work/p"
    mkdir "$work/s"
    c0=$(cpu)
    t0=$(date +%s.%N)
    for q in $qs; do "$dlqx" peek "$q" -o "$work/s/$q.jsonl" 2>/dev/null; done
    t1=$(date +%s.%N)
    c1=$(cpu)
    check "$work/s/"
    c2=$(cpu)
    t2=$(date +%s.%N)
    # shellcheck disable=SC2086 # qs: names without spaces
    "$dlqx" peek $qs -o "$work/p" 2>/dev/null
    t3=$(date +%s.%N)
    c3=$(cpu)
    check "$work/p/"
    s=$(echo "$t1 - $t0" | bc) p=$(echo "$t3 - $t2" | bc)
    printf 'round %d: one after another %.2f s (%.0f msg/s, client CPU %.2f s) | at once %.2f s (%.0f msg/s, client CPU %.2f s) | ratio %.2f\n' \
        "$r" "$s" "$(echo "$nq * $count / $s" | bc -l)" "$(echo "$c1 - $c0" | bc)" \
        "$p" "$(echo "$nq * $count / $p" | bc -l)" "$(echo "$c3 - $c2" | bc)" "$(echo "$s / $p" | bc -l)"
    seq_t="$seq_t $s" par_t="$par_t $p"
    r=$((r + 1))
done
median() { echo "$@" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ms=$(median $seq_t) mp=$(median $par_t)
printf 'median: one after another %.2f s, at once %.2f s: at once is %.2fx as fast (%d queues, %d rounds)\n' \
    "$ms" "$mp" "$(echo "$ms / $mp" | bc -l)" "$nq" "$rounds"
echo "queues intact after every round; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
