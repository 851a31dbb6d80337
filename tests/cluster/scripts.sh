#!/usr/bin/env bash
# shellcheck disable=SC2015 # ok never fails: A && ok || bad is if-then-else here
# tests/cluster/scripts.sh SOURCE_ROOT: scripts/broker cluster itself. Three nodes start and
# form one cluster; a quorum queue gets a member on each; a SIGKILLed node leaves two
# running and comes back with start-node; a paused node (SIGSTOP) is hung, not gone, and
# runs again on resume; stop leaves no process, no directory and no port reservation.
# DLQX_TEST_CLUSTER_DIR: use a running cluster (it is then not stopped, and the stop checks
# are skipped).
set -euo pipefail
root=$1
broker=$root/scripts/broker
rundir=${DLQX_BROKER_RUNDIR:-/tmp/dlqx-broker}
fails=0
ok() { printf 'ok   %s\n' "$*"; }
bad() {
	printf 'FAIL %s\n' "$*"
	fails=$((fails + 1))
}
now() { date +%s; }

own=0
if [[ -n ${DLQX_TEST_CLUSTER_DIR:-} ]]; then
	C=$DLQX_TEST_CLUSTER_DIR
else
	t0=$(now)
	C=$("$broker" cluster start 3 2>"${TMPDIR:-/tmp}/dlqx-test-cluster.log" | tail -n 1)
	if [[ -z $C || ! -f $C/env ]]; then
		echo "the cluster did not start:" >&2
		cat "${TMPDIR:-/tmp}/dlqx-test-cluster.log" >&2
		exit 1
	fi
	own=1
	ok "cluster of 3 started in $(($(now) - t0)) s"
fi
trap '((own)) && [[ -d $C ]] && "$broker" cluster stop "$C" --fast >/dev/null 2>&1' EXIT
# shellcheck source=/dev/null
. "$C/env"

# running N FROM: poll (30 s at most) until node FROM's cluster_status lists N running nodes.
running_now() {
	"$broker" cluster ctl "$C" "$1" cluster_status --formatter json </dev/null 2>/dev/null |
		grep -o '"running_nodes":\[[^]]*\]' | grep -o '@' | wc -l
}
running() {
	local want=$1 from=$2 limit=$(($(now) + 30)) got
	while :; do
		got=$(running_now "$from")
		[[ $got == "$want" ]] && return 0
		(($(now) < limit)) || {
			echo "  node $from sees $got running, not $want" >&2
			return 1
		}
		sleep 0.5
	done
}
state() { "$broker" cluster status "$C" 2>/dev/null | awk -v n="n$1" '$1 == n { print $2 }'; }

if running 3 1; then ok "cluster_status: 3 running"; else bad "cluster_status: 3 running"; fi
[[ $(tr ',' '\n' <<<"$DLQX_URL" | grep -c '^amqp://') == 3 ]] &&
	[[ $(tr ',' '\n' <<<"$DLQX_MGMT_URL" | grep -c '^http://') == 3 ]] &&
	ok "env: 3 amqp URLs, 3 management URLs" || bad "env: DLQX_URL=$DLQX_URL DLQX_MGMT_URL=$DLQX_MGMT_URL"

# A quorum queue, declared through node 2's management API, a member on each node.
pw=$(<"$DLQX_PASSWORD_FILE")
mgmt2=$DLQX_NODE2_MGMT_URL
api() { printf 'user = "dlqx:%s"\n' "$pw" | curl -q -s -K - --max-time 10 "$@"; }
api -X PUT -H 'content-type: application/json' \
	-d '{"durable":true,"arguments":{"x-queue-type":"quorum"}}' "${mgmt2}api/queues/%2F/cluster.qq" >/dev/null
members=0
limit=$(($(now) + 30))
while (($(now) < limit)); do
	members=$(api "${mgmt2}api/queues/%2F/cluster.qq" | grep -o '"members":\[[^]]*\]' | grep -o '@' | wc -l)
	((members == 3)) && break
	sleep 0.5
done
((members == 3)) && ok "quorum queue: 3 members" || bad "quorum queue: $members members, not 3"

# SIGKILL node 3: two running; start-node: three again.
"$broker" cluster kill "$C" 3 2>/dev/null
[[ $(state 3) == stopped ]] && ok "kill: node 3 stopped" || bad "kill: node 3 is $(state 3)"
if running 2 1; then ok "after kill: 2 running"; else bad "after kill: 2 running"; fi
"$broker" cluster start-node "$C" 3 2>/dev/null
if running 3 1; then ok "start-node: 3 running"; else bad "start-node: 3 running"; fi
[[ $(state 3) == running ]] && ok "start-node: node 3 running" || bad "start-node: node 3 is $(state 3)"

# Pause node 2: its beam is stopped (state T), the node does not answer; resume: it does.
"$broker" cluster pause "$C" 2 2>/dev/null
[[ $(state 2) == paused ]] && ok "pause: node 2 paused" || bad "pause: node 2 is $(state 2)"
if timeout 8 "$broker" cluster ctl "$C" 2 status </dev/null >/dev/null 2>&1; then
	bad "pause: node 2 still answers rabbitmqctl status"
else
	ok "pause: node 2 does not answer"
fi
"$broker" cluster resume "$C" 2 2>/dev/null
[[ $(state 2) == running ]] && ok "resume: node 2 running" || bad "resume: node 2 is $(state 2)"
if running 3 2; then ok "resume: node 2 sees 3 running"; else bad "resume: node 2 sees 3 running"; fi

if ((own)); then
	block=$((DLQX_EPMD_PORT - 3))
	"$broker" cluster stop "$C" --fast 2>/dev/null
	left=$({ grep -lzF "DLQX_BROKER_INSTANCE=$C" /proc/[0-9]*/environ 2>/dev/null || true; } | while read -r f; do
		p=${f#/proc/}
		p=${p%/environ}
		s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		s=${s##*) }
		[[ ${s%% *} == Z ]] || echo "$p"
	done)
	[[ -z $left ]] && ok "stop: no process left" || bad "stop: processes left: $left"
	[[ ! -e $C ]] && ok "stop: $C removed" || bad "stop: $C still there"
	[[ ! -f $rundir/ports-$block ]] && ! grep -rqsF "$C" "$rundir"/ports-* &&
		ok "stop: no port reservation left" || bad "stop: a reservation of $C is left in $rundir"
	own=0
fi

((fails == 0)) || {
	echo "$fails check(s) failed"
	exit 1
}
echo "all cluster script checks passed"
