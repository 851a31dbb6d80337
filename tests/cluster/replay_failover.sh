#!/usr/bin/env bash
# shellcheck disable=SC2015 # ok never fails: A && ok || bad is if-then-else here
# tests/cluster/replay_failover.sh DLQX DLQX_SEED SOURCE_ROOT: a bulk replay and a move that
# carry on when a node dies (issue 13). On a 3-node cluster a quorum DLQ holds 20,000 real dead
# letters (dead-lettered by the broker: x-message-ttl 0 through a dead-letter exchange) and a
# quorum queue is the target. Each round runs `dlqx replay --all` (or `dlqx move`), connected
# first to the node that will die, and at a random instant (a random count of outcomes in the
# journal) either SIGKILLs the DLQ's leader, SIGKILLs the target's leader, or SIGSTOPs a node
# (a hung node: dlqx's heartbeat notices it; SIGCONT once the pass has moved on). After each
# round (tests/cluster/failover_check.py): every id is in the target or the DLQ, none lost;
# each id held twice is named by `dlqx journal --pending`; the report's counts agree with what
# the queues hold; the DLQ's dead letters are in their order; and the pass used a second
# attempt (the node died during it).
#
# DLQX_CLUSTER_ROUNDS: rounds (default 16: 12 replay — 4 of each kind — and 4 move; the kinds
# go round in that order). DLQX_FAILOVER_COUNT: dead letters (default 20000).
# DLQX_TEST_CLUSTER_DIR: use a running cluster (every node is left running).
set -uo pipefail
dlqx=$1
seed=$2
root=$3
broker=$root/scripts/broker
check=$(dirname "$0")/failover_check.py
N=${DLQX_FAILOVER_COUNT:-20000}
rounds=${DLQX_CLUSTER_ROUNDS:-16}
tmp=$(mktemp -d)
# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
dlqx_pid=''
cleanup() {
	[[ -n $dlqx_pid ]] && kill "$dlqx_pid" 2>/dev/null
	if ((own)); then
		"$broker" cluster stop "$C" --fast >/dev/null 2>&1
	elif [[ -n $C ]]; then # a cluster lent to us: every node running, as it was
		for i in 1 2 3; do
			"$broker" cluster resume "$C" "$i" >/dev/null 2>&1
			"$broker" cluster start-node "$C" "$i" >/dev/null 2>&1
		done
	fi
	[[ -n ${DLQX_KEEP_TMP:-} ]] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cluster_up
api() { # node, method, path, [json body]: the body to stdout
	local url
	url=$(eval echo "\$DLQX_NODE${1}_MGMT_URL")
	printf 'user = "dlqx:%s"\n' "$password" |
		curl -q -s -K - --max-time 10 -X "$2" -H 'content-type: application/json' \
			${4:+--data-binary "$4"} "${url}api/$3"
}
url() { eval echo "\$DLQX_NODE${1}_URL"; }
name() { eval echo "\$DLQX_NODE${1}_NAME"; }
urls_from() { # node first, then the others: the order dlqx tries them in
	local s
	s=$(url "$1")
	for i in 1 2 3; do [[ $i == "$1" ]] || s+=",$(url "$i")"; done
	echo "$s"
}
live=1 # a node that is up, for the management API and the refill
# Each round has queues of its own (rfR.flood.dlq, rfR.target): a classic source queue left on
# a node that was killed, or a round's leftovers, never get in the next one's way.
set_queues() {
	pfx=rf$1.
	dlq=${pfx}flood.dlq
	target=${pfx}target
}
# The queue's leader (its node index), asked of a node that is up.
leader() {
	local n
	n=$(api "$live" GET "queues/%2F/$1" | /usr/bin/python3 -c \
		'import json,sys; q=json.load(sys.stdin); print(q.get("leader") or q.get("node") or "")' 2>/dev/null)
	for i in 1 2 3; do [[ $(name "$i") == "$n" ]] && echo "$i" && return; done
	echo 1
}
depth() {
	api "$live" GET "queues/%2F/$1" | /usr/bin/python3 -c \
		'import json,sys; print(json.load(sys.stdin).get("messages_ready", -1))' 2>/dev/null
}
wait_depth() { # queue, want, seconds
	local end=$((SECONDS + $3))
	while ((SECONDS < end)); do
		[[ $(depth "$1") == "$2" ]] && return 0
		sleep 0.5
	done
	return 1
}
# The round's DLQ filled with N dead letters the broker made (flood: x-message-ttl 0 on a classic
# source), its target declared empty. Through node $live.
refill() {
	# Left by an earlier run that was stopped: gone first.
	for q in "$dlq" "$target" "${pfx}flood"; do api "$live" DELETE "queues/%2F/$q" >/dev/null; done
	# Through another node than the DLQ's (the seed's): a quorum queue's leader is where it is
	# declared, so the two leaders differ and killing one is not killing both.
	local other=$live i
	for i in 1 2 3; do [[ $i != "$live" && $i != "${victim:-0}" ]] && other=$i && break; done
	api "$other" PUT "queues/%2F/$target" '{"durable":true,"arguments":{"x-queue-type":"quorum"}}' >/dev/null
	"$seed" --url "$(url "$live")" --password-file "$DLQX_PASSWORD_FILE" --scenario flood \
		--count "$N" --size 128 --queue-type quorum --prefix "$pfx" >"$tmp/seed.log" 2>&1 ||
		{ bad "refill: dlqx-seed failed: $(tail -n 2 "$tmp/seed.log")" && return 1; }
	wait_depth "$dlq" "$N" 90 || { bad "refill: $dlq did not reach $N (at $(depth "$dlq"))" && return 1; }
}
set_queues 1
refill || exit 1
ok "$dlq: $N dead letters (quorum), $target (quorum) on a 3-node cluster"

outcomes() {
	local n
	n=$(grep -c '"kind":"outcome"' "$1" 2>/dev/null)
	echo "${n:-0}"
}
kinds=(dlq-leader target-leader pause)
replays=$((rounds * 3 / 4))
declare -A tally
total_dups=0
total_attempts=0
for ((r = 1; r <= rounds; r++)); do
	if ((r <= replays)); then
		op=replay kind=${kinds[$(((r - 1) % 3))]}
	else
		op=move kind=${kinds[$(((r - 1) % 2))]}
	fi
	ld=$(leader "$dlq") lt=$(leader "$target")
	case $kind in
	dlq-leader) victim=$ld ;;
	target-leader) victim=$lt ;;
	pause) # a node that leads neither queue when there is one: only dlqx's connection hangs
		victim=$ld
		for i in 1 2 3; do [[ $i != "$ld" && $i != "$lt" ]] && victim=$i && break; done ;;
	esac
	J=$tmp/journal-$r.jsonl
	pid=$("$broker" cluster status "$C" | awk -v n="n$victim" '$1 == n { print $NF }')
	label="round $r ($op, $kind: node $victim; dlq leader $ld, target leader $lt)"
	if [[ $op == replay ]]; then
		args=(replay "$dlq" --all --to ":$target")
	else
		args=(move "$dlq" --all --to-queue "$target")
	fi
	DLQX_URL=$(urls_from "$victim") DLQX_PASSWORD_FILE=$DLQX_PASSWORD_FILE DLQX_MGMT_URL='' \
		"$dlqx" "${args[@]}" --type quorum --yes --json --journal "$J" >"$tmp/report-$r.json" \
		2>"$tmp/err-$r.log" &
	dlqx_pid=$!
	# The instant: a random count of outcomes in the journal, 2% to 70% of the way.
	at=$((N * 2 / 100 + RANDOM * (N * 68 / 100) / 32768))
	end=$((SECONDS + 120))
	while ((SECONDS < end)) && kill -0 "$dlqx_pid" 2>/dev/null && (($(outcomes "$J") < at)); do
		sleep 0.05
	done
	killed_at=$(date +%s.%N)
	if [[ $kind == pause ]]; then
		kill -STOP "$pid" 2>/dev/null
		# SIGCONT once the pass has moved on (a new attempt) or after 40 s.
		end=$((SECONDS + 40))
		while ((SECONDS < end)) && kill -0 "$dlqx_pid" 2>/dev/null &&
			! grep -q '"kind":"attempt"' "$J"; do sleep 0.2; done
		"$broker" cluster resume "$C" "$victim" >/dev/null 2>&1
	else
		kill -KILL "$pid" 2>/dev/null # at once: the script's own start-up would take a while
		"$broker" cluster kill "$C" "$victim" >/dev/null 2>&1
	fi
	((victim == 1)) && live=2 || live=1
	end=$((SECONDS + 240))
	while ((SECONDS < end)) && kill -0 "$dlqx_pid" 2>/dev/null; do sleep 0.2; done
	if kill -0 "$dlqx_pid" 2>/dev/null; then
		bad "$label: dlqx did not finish within 240 s"
		kill "$dlqx_pid"
	fi
	wait "$dlqx_pid"
	rc=$?
	dlqx_pid=''
	"$dlqx" journal --pending --json --file "$J" >"$tmp/pending-$r.jsonl" 2>/dev/null
	# What the queues hold, read (nothing removed) through the nodes that are up.
	peek_urls=$(urls_from "$live")
	[[ $kind == pause ]] || peek_urls=$(echo "$peek_urls" | tr ',' '\n' | grep -v "^$(url "$victim")\$" | paste -sd,)
	for q in "$target" "$dlq"; do
		DLQX_URL=$peek_urls DLQX_MGMT_URL='' "$dlqx" peek "$q" --type quorum -o "$tmp/$q-$r.jsonl" \
			>/dev/null 2>"$tmp/peek-$r.log" || bad "$label: peek $q failed: $(tail -n 1 "$tmp/peek-$r.log")"
	done
	attempts=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]).get("attempts", 1))' \
		"$tmp/report-$r.json" 2>/dev/null || echo 0)
	((attempts >= 2)) && ok "$label: exit $rc, carried on: $attempts attempts" ||
		bad "$label: exit $rc, $attempts attempt(s): the pass did not carry on ($(tail -n 2 "$tmp/err-$r.log"))"
	/usr/bin/python3 "$check" "$N" flood- "$tmp/report-$r.json" "$tmp/pending-$r.jsonl" \
		"$tmp/$target-$r.jsonl" "$tmp/$dlq-$r.jsonl" "$label" "$J" "$killed_at" >"$tmp/check-$r.log"
	cat "$tmp/check-$r.log"
	grep -q '^FAIL' "$tmp/check-$r.log" && fails=$((fails + $(grep -c '^FAIL' "$tmp/check-$r.log")))
	d=$(sed -n 's/.*duplicates \([0-9]*\).*/\1/p' "$tmp/check-$r.log")
	total_dups=$((total_dups + ${d:-0}))
	total_attempts=$((total_attempts + attempts))
	tally[$op-$kind]=$((${tally[$op-$kind]:-0} + 1))
	# The node back (it rejoins), the queues filled again while it boots.
	if ((r < rounds)); then
		[[ $kind == pause ]] || "$broker" cluster start-node "$C" "$victim" >"$tmp/start-$r.log" 2>&1 &
		spid=$!
		for q in "$dlq" "$target"; do api "$live" DELETE "queues/%2F/$q" >/dev/null; done
		set_queues $((r + 1))
		refill
		[[ $kind == pause ]] || wait "$spid" || bad "$label: node $victim did not start again"
	fi
done
[[ $kind == pause ]] || "$broker" cluster start-node "$C" "$victim" >/dev/null 2>&1
for q in "$dlq" "$target"; do api "$live" DELETE "queues/%2F/$q" >/dev/null; done
summary=''
for k in "${!tally[@]}"; do summary+=" $k=${tally[$k]}"; done
echo "figures: $rounds rounds ($summary ), $total_attempts attempts, $total_dups duplicates named by the journal, $fails failures"
((fails == 0)) || exit 1
