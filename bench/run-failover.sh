#!/usr/bin/env bash
# run-failover.sh: a replay on a 3-node cluster whose node dies (issue 13).
#
#   bench/run-failover.sh [KILLS] [BUILD_DIR]
#
# 1. The time from a node's death to the replay running again: KILLS rounds (default 6) of
#    tests/cluster/replay_failover.sh — a quorum DLQ of 20,000 dead letters replayed in bulk
#    while the DLQ's leader, the target's leader or a paused node goes at a random instant —
#    each giving the seconds from the SIGKILL (or SIGSTOP) to the first copy done by the next
#    attempt (its outcome in the journal); the median and the max.
# 2. The replay rate: 20,000 dead letters (128 B) replayed in bulk, once on the cluster (a
#    quorum DLQ and a quorum target, connected to node 1) and once on one node of its own
#    (a classic DLQ and target, then quorum ones), in the same run.
# DLQX_TEST_CLUSTER_DIR: a running cluster to use (else one is started and stopped).
set -uo pipefail
kills=${1:-6}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-${DLQX_BUILD:-$root/build}}
dlqx=$build/dlqx
seed=$build/dlqx-seed
broker=$root/scripts/broker
N=20000
[[ -x $dlqx && -x $seed ]] || { echo "run-failover: build dlqx and dlqx-seed in $build first" >&2; exit 1; }
echo "== run-failover: $(nproc) cores, $(uptime | sed 's/.*load/load/'), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
tmp=$(mktemp -d)
own=0 single=''
C=${DLQX_TEST_CLUSTER_DIR:-}
cleanup() {
	((own)) && "$broker" cluster stop "$C" --fast >/dev/null 2>&1
	[[ -n $single ]] && "$broker" stop "$single" --fast >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
if [[ -z $C ]]; then
	C=$("$broker" cluster start 3 2>"$tmp/cluster.log" | tail -n 1)
	[[ -f $C/env ]] || { echo "run-failover: the cluster did not start" >&2; cat "$tmp/cluster.log"; exit 1; }
	own=1
fi

# ---- 1. back after a death -----------------------------------------------------------------
echo "== $kills rounds of tests/cluster/replay_failover.sh"
DLQX_TEST_CLUSTER_DIR=$C DLQX_CLUSTER_ROUNDS=$kills "$root/tests/cluster/replay_failover.sh" \
	"$dlqx" "$seed" "$root" >"$tmp/rounds.log" 2>&1
grep -E '^(FAIL|figures)' "$tmp/rounds.log"
sed -n 's/.*back after \([0-9.]*\) s.*/\1/p' "$tmp/rounds.log" | sort -n >"$tmp/back"
if [[ -s $tmp/back ]]; then
	n=$(wc -l <"$tmp/back")
	echo "back after a death: $n rounds, median $(sed -n "$(((n + 1) / 2))p" "$tmp/back") s, max $(tail -n 1 "$tmp/back") s"
fi

# ---- 2. the rate: the cluster against one node ---------------------------------------------
# shellcheck source=/dev/null
. "$C/env"
cpw=$DLQX_PASSWORD_FILE
c1=$DLQX_NODE1_URL
mg1=$DLQX_NODE1_MGMT_URL
single=$("$broker" start 2>"$tmp/single.log" | tail -n 1)
# shellcheck source=/dev/null
s_env=$( . "$single/env" && echo "$DLQX_URL|$DLQX_PASSWORD_FILE|$DLQX_MGMT_URL")
IFS='|' read -r s_url s_pw s_mg <<<"$s_env"
for run in "cluster quorum|$c1|$cpw|quorum|$mg1" "one node classic|$s_url|$s_pw|classic|$s_mg" \
	"one node quorum|$s_url|$s_pw|quorum|$s_mg"; do
	IFS='|' read -r label url pw type mg <<<"$run"
	pfx=bench$RANDOM.
	"$seed" --url "$url" --password-file "$pw" --scenario flood --count $N --size 128 \
		--queue-type "$type" --prefix "$pfx" >/dev/null 2>&1 || { echo "$label: the seed failed"; continue; }
	printf 'user = "dlqx:%s"\n' "$(cat "$pw")" | curl -q -s -K - -o /dev/null --max-time 10 -X PUT \
		-H 'content-type: application/json' \
		--data-binary "{\"durable\":true,\"arguments\":{\"x-queue-type\":\"$type\"}}" \
		"${mg}api/queues/%2F/${pfx}target"
	sleep 6 # the flood reaches the DLQ
	DLQX_URL=$url DLQX_PASSWORD_FILE=$pw DLQX_MGMT_URL='' "$dlqx" replay "${pfx}flood.dlq" --all \
		--to ":${pfx}target" --type "$type" --yes --json --journal "$tmp/rate-$RANDOM.jsonl" \
		>"$tmp/rate.json" 2>/dev/null
	/usr/bin/python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print("rate %s: %d done in %.2f s: %.0f copies/s" % (sys.argv[2], r["done"], r["seconds"], r["done"] / r["seconds"] if r["seconds"] else 0))' \
		"$tmp/rate.json" "$label"
done
