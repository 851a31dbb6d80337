#!/usr/bin/env bash
# shellcheck disable=SC2015 # ok never fails: A && ok || bad is if-then-else here
# tests/cluster/peek_failover.sh DLQX DLQX_SEED SOURCE_ROOT: `dlqx peek` on a 3-node cluster
# whose DLQ's leader dies mid-peek (issue 13). A quorum DLQ holds 20,000 real dead letters
# (expired by the broker: x-message-ttl 0 and a dead-letter exchange; dlqx-seed --scenario
# flood). Each round finds the DLQ's leader, starts `dlqx peek` connected to the leader's node
# first, and SIGKILLs that node at a random instant of the read: once the snapshot's temporary
# file holds a random count of 50-1,000 (by its size; the peek's progress on a terminal came
# seconds late on a loaded machine). Bodies of 4 KiB (90 MB in all): the broker ran up to
# 17,000 of them (75 MB) ahead of the peek into the socket buffers, and a read whose broker had
# sent everything before it died completes from them, rightly, on one attempt (this failed CI
# once, on a machine loaded by other tests: 3 rounds of 4 killed too late). So at that instant
# dlqx is stopped (SIGSTOP) for the node's death: the broker then sends only what the socket
# buffers hold (a few MB) before the node dies, and dlqx, continued, reads those and meets the
# dead connection mid-read — every time. Should a round still end on one attempt, it is run
# again (3 times at most). The last round SIGSTOPs the leader's node instead, and resumes it
# once the peek has moved on to another node. After each round:
# - the peek exits 0 and its report says at least 2 attempts, naming the lost node;
# - the snapshot holds all 20,000, in the queue's order (the message ids and bodies of a
#   reference peek taken before the first round, one by one), no duplicate;
# - the queue is identical after: a second peek, through a node that stayed up, reads the same
#   20,000 in the same order.
# Then the node is started again (or resumed) and the next round waits for the DLQ's three
# members to be online. Rounds: DLQX_CLUSTER_ROUNDS (default 4: 3 kills and a pause; at least 2
# means the last is the pause). It leaves the cluster with every node running.
# DLQX_TEST_CLUSTER_DIR: use a running cluster (its queues pfNNN.* are deleted at the end).
set -uo pipefail
dlqx=$1
seed=$2
root=$3
broker=$root/scripts/broker
rounds=${DLQX_CLUSTER_ROUNDS:-4}
((rounds >= 1)) || rounds=1
tmp=$(mktemp -d)
# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
prefix=pf$$.
dlq=${prefix}flood.dlq
cleanup() {
	if ((own)); then
		"$broker" cluster stop "$C" --fast >/dev/null 2>&1
	elif [[ -n $C ]]; then # a cluster lent to us: every node running, our queues gone
		for i in 1 2 3; do
			"$broker" cluster resume "$C" "$i" >/dev/null 2>&1
			st=$("$broker" cluster status "$C" 2>/dev/null | awk -v n="n$i" '$1 == n {print $2}')
			[[ $st == stopped ]] && "$broker" cluster start-node "$C" "$i" >/dev/null 2>&1
		done
		for q in "$dlq" "${prefix}flood"; do api_any DELETE "queues/%2F/$q" >/dev/null; done
		api_any DELETE "exchanges/%2F/${prefix}flood.dlx" >/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cluster_up
node_var() { eval echo "\$DLQX_NODE${1}_$2"; }
api() { # node, method, path: the body (the password in curl's config on stdin, never argv)
	printf 'user = "dlqx:%s"\n' "$password" |
		curl -q -s -K - --max-time 5 -X "$2" "$(node_var "$1" MGMT_URL)api/$3"
}
api_any() { # method, path: through the first node that answers
	local i out
	for i in 1 2 3; do
		out=$(api "$i" "$1" "$2") && { printf '%s' "$out"; return 0; }
	done
	return 1
}
leader() { # the DLQ's leader as a node number (empty when unknown)
	local name i
	name=$(api_any GET "queues/%2F/$dlq" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("leader") or "")' 2>/dev/null)
	for i in 1 2 3; do [[ $name == "$(node_var "$i" NAME)" ]] && echo "$i"; done
}
online() { # how many of the DLQ's members are online
	api_any GET "queues/%2F/$dlq" | python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("online") or []))' 2>/dev/null || echo 0
}
wait_online() { # all three members online (60 s at most)
	local t
	for ((t = 0; t < 120; t++)); do
		[[ $(online) == 3 ]] && return 0
		sleep 0.5
	done
	return 1
}
urls_from() { # node I first, then the others: --url arguments
	local i=$1 j
	printf -- '--url\n%s\n' "$(node_var "$i" URL)"
	for j in 1 2 3; do ((j != i)) && printf -- '--url\n%s\n' "$(node_var "$j" URL)"; done
}
# The snapshot's message ids and bodies, one line each, as "id<TAB>sha256(body)".
digest() {
	python3 -c '
import hashlib, json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["properties"]["message_id"] + "\t" + hashlib.sha256(line[line.index("\"body\""):].encode()).hexdigest())
' "$1"
}
same_as_reference() { # snapshot, what: compared with the reference, in order, no duplicate
	local n dup
	digest "$1" >"$tmp/got"
	n=$(wc -l <"$tmp/got")
	dup=$(cut -f1 "$tmp/got" | sort | uniq -d | wc -l)
	if cmp -s "$tmp/got" "$tmp/ref"; then
		ok "$2: all $n, in the queue's order, no duplicate"
	else
		bad "$2: $n messages, $dup duplicate ids; first difference: $(diff "$tmp/ref" "$tmp/got" | sed -n 2p)"
	fi
}

"$broker" cluster status "$C" >/dev/null 2>&1 || bad "not every node runs before the test"
"$seed" --url "$DLQX_NODE1_URL" --password-file "$DLQX_PASSWORD_FILE" --scenario flood \
	--count 20000 --size 4096 --queue-type quorum --prefix "$prefix" >"$tmp/seed.log" 2>&1 &&
	ok "20,000 dead letters expired into the quorum queue $dlq" ||
	{ bad "seeding: $(tail -n 2 "$tmp/seed.log")"; exit 1; }
wait_online
t0=$EPOCHREALTIME
"$dlqx" peek "$dlq" --url "$DLQX_NODE1_URL" --mgmt-url "$DLQX_MGMT_URL" -o "$tmp/ref.jsonl" \
	2>"$tmp/ref.log" && ok "the reference peek" || bad "the reference peek: $(cat "$tmp/ref.log")"
whole=$(python3 -c "print(round($EPOCHREALTIME - $t0, 2))")
digest "$tmp/ref.jsonl" >"$tmp/ref"
rec=$(($(stat -c %s "$tmp/ref.jsonl") / 20000)) # bytes a message in the snapshot
[[ $(wc -l <"$tmp/ref") == 20000 ]] && ok "a whole peek takes ${whole} s" ||
	bad "the reference holds $(wc -l <"$tmp/ref")"

redo=0
for ((r = 1; r <= rounds; r++)); do
	pause=0
	((r == rounds && rounds >= 2)) && pause=1
	what=$( ((pause)) && echo paused || echo killed)
	wait_online || bad "round $r: the DLQ's members are not all online"
	L=$(leader)
	[[ -n $L ]] || { bad "round $r: no leader found"; continue; }
	mapfile -t urls < <(urls_from "$L")
	at=$(((RANDOM % 951) + 50))
	start=$EPOCHREALTIME
	"$dlqx" peek "$dlq" "${urls[@]}" --mgmt-url "$DLQX_MGMT_URL" -o "$tmp/snap$r.jsonl" \
		--report "$tmp/rep$r.json" 2>"$tmp/peek$r.log" &
	pid=$!
	# How far the read is: the snapshot's temporary file (FILE.dlqx-XXXXXX), by its size.
	n=0
	for ((t = 0; t < 1500; t++)); do
		sz=$(stat -c %s "$tmp/snap$r.jsonl".dlqx-* 2>/dev/null | head -n 1)
		n=$((${sz:-0} / rec))
		((n >= at)) && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	delay="$(python3 -c "print(round($EPOCHREALTIME - $start, 2))") s ($n read)"
	# dlqx held while the node goes (above): what the broker can still send is what the
	# socket buffers take, then TCP's flow control stops it.
	kill -STOP "$pid" 2>/dev/null
	sleep 0.5
	if ((pause)); then
		kill -STOP "$(cat "$(node_var "$L" DIR)/rabbitmq.pid")" # at once: the script takes a while
		died=$EPOCHREALTIME
		kill -CONT "$pid" 2>/dev/null
		for ((t = 0; t < 300; t++)); do
			grep -q "reading the queue again" "$tmp/peek$r.log" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		moved=$EPOCHREALTIME
		sleep 1
		"$broker" cluster resume "$C" "$L" >/dev/null 2>&1
	else
		kill -KILL "$(cat "$(node_var "$L" DIR)/rabbitmq.pid")" # at once, as cluster kill does
		died=$EPOCHREALTIME
		kill -CONT "$pid" 2>/dev/null
		for ((t = 0; t < 300; t++)); do
			grep -q "reading the queue again" "$tmp/peek$r.log" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		moved=$EPOCHREALTIME
	fi
	wait "$pid"
	rc=$?
	took=$(python3 -c "print(round($EPOCHREALTIME - $start, 1), round($moved - $died, 1))")
	attempts=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("attempts"))' "$tmp/rep$r.json" 2>/dev/null)
	lost=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("nodes_lost") or "")' "$tmp/rep$r.json" 2>/dev/null)
	echo "round $r ($(date +%T)): node $L $what ${delay}; peek ${took% *} s, reading again ${took#* } s after; exit $rc; attempts $attempts; $lost"
	if [[ $rc == 0 && ${attempts:-0} == 1 && $redo -lt 3 ]]; then
		echo "round $r: the broker had sent every message before it died: the round again"
		redo=$((redo + 1))
		((pause)) || "$broker" cluster start-node "$C" "$L" >/dev/null 2>&1
		r=$((r - 1))
		continue
	fi
	[[ $lost =~ lost\ after\ ([0-9]+)\ of && ${BASH_REMATCH[1]} -gt 0 ]] &&
		ok "round $r: the lost read had taken ${BASH_REMATCH[1]} messages (forgotten)" ||
		bad "round $r: the lost read had taken none: not a failure mid-read"
	[[ $rc == 0 ]] && ok "round $r ($what): the peek is complete (exit 0)" ||
		bad "round $r ($what): exit $rc: $(tail -n 3 "$tmp/peek$r.log")"
	[[ ${attempts:-0} -ge 2 && $lost == *"$(node_var "$L" URL)"* ]] &&
		ok "round $r: the report says $attempts attempts, node $L lost" ||
		bad "round $r: the report says attempts ${attempts:-?}, lost: ${lost:-none}"
	grep -q "attempts (node .* lost after " "$tmp/peek$r.log" && ok "round $r: the summary line says the attempts" ||
		bad "round $r: no 'N attempts (node X lost: …)' line: $(cat "$tmp/peek$r.log")"
	same_as_reference "$tmp/snap$r.jsonl" "round $r: the snapshot"
	# The node back first: while it rejoins, a quorum queue that still counts the dead
	# connection's consumer can stop delivering for longer than a peek waits (seen once in 12
	# rounds: the peek after read nothing for 5 s).
	if ((!pause)); then
		"$broker" cluster start-node "$C" "$L" >"$tmp/start$r.log" 2>&1 ||
			bad "round $r: node $L did not start again: $(tail -n 3 "$tmp/start$r.log")"
	fi
	wait_online || bad "round $r: the DLQ's members are not all online after the round"
	other=$((L % 3 + 1))
	"$dlqx" peek "$dlq" --url "$(node_var "$other" URL)" --mgmt-url "$DLQX_MGMT_URL" \
		-o "$tmp/after$r.jsonl" 2>"$tmp/after$r.log" ||
		bad "round $r: the peek after: $(tail -n 2 "$tmp/after$r.log")"
	same_as_reference "$tmp/after$r.jsonl" "round $r: the queue after"
	echo "round $r: the peek after done ($(date +%T))"
done
wait_online && ok "every node running, the DLQ's three members online" ||
	bad "the DLQ's members are not all online at the end"
echo "$((rounds)) rounds, $fails failures"
((fails == 0))
