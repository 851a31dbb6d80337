#!/usr/bin/env bash
# shellcheck disable=SC2015 # ok never fails: A && ok || bad is if-then-else here
# tests/cluster/queues_screen.sh DLQX SOURCE_ROOT: the explorer's queues view on a 3-node
# cluster while its nodes die (issue 13). Two DLQs: a classic one that lives on node 3 and a
# quorum one with a member on each node. With every node up the view shows the classic queue's
# home node and warns that it lives on one node, and the quorum queue's 3/3 members online. Node
# 3 is SIGKILLed, no key is pressed: the queues view refreshes itself and shows the classic DLQ
# as UNAVAILABLE with its depth "?" (never 0) and the quorum one with a member offline, 2/3
# online. Node 2 is SIGKILLed too: the quorum DLQ is BELOW QUORUM, 1/3 online. The view answers
# keys throughout, and the explanation of the row under the cursor names the dead node.
#
# The explorer is given every node's AMQP URL and every node's management URL, node 3's first
# and node 1's last: when node 3 dies its refreshes go on through node 2, and when node 2 dies
# through node 1 (the rows keep changing, so they are not stale copies).
# DLQX_TEST_CLUSTER_DIR: use a running cluster (its nodes 2 and 3 are killed and started again).
set -uo pipefail
dlqx=$1
root=$2
broker=$root/scripts/broker
command -v tmux >/dev/null || { echo "FAIL tmux is not installed (scripts/deps)"; exit 1; }
tmp=$(mktemp -d)
# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
sock=dlqx-cq-$$
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null
	if ((own)); then
		"$broker" cluster stop "$C" --fast >/dev/null 2>&1
	elif [[ -n $C ]]; then # a cluster lent to us: its nodes as they were
		"$broker" cluster start-node "$C" 2 >/dev/null 2>&1
		"$broker" cluster start-node "$C" 3 >/dev/null 2>&1
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cluster_up
api() { # node, method, path, [json body]: the HTTP status
	local url
	url=$(eval echo "\$DLQX_NODE${1}_MGMT_URL")
	printf 'user = "dlqx:%s"\n' "$password" |
		curl -q -s -K - -o /dev/null -w '%{http_code}' --max-time 10 -X "$2" \
			-H 'content-type: application/json' ${4:+--data-binary "$4"} "${url}api/$3"
}
node3=$DLQX_NODE3_NAME
node2=$DLQX_NODE2_NAME

# The classic DLQ is declared through node 3's management API: it lives on node 3.
st=$(api 3 PUT "queues/%2F/cq-classic.dlq" '{"durable":true}')
st+=" $(api 1 PUT "queues/%2F/cq-quorum.dlq" '{"durable":true,"arguments":{"x-queue-type":"quorum"}}')"
for q in classic quorum; do
	st+=" $(api 1 PUT "queues/%2F/cq-$q" "{\"durable\":true,\"arguments\":{\"x-dead-letter-exchange\":\"\",\"x-dead-letter-routing-key\":\"cq-$q.dlq\"}}")"
	for i in 1 2 3; do
		api 1 POST "exchanges/%2F/amq.default/publish" \
			"{\"routing_key\":\"cq-$q.dlq\",\"payload\":\"{}\",\"payload_encoding\":\"string\",\"properties\":{\"message_id\":\"$q-$i\"}}" >/dev/null
	done
done
[[ $st =~ ^(20[14] ){3}20[14]$ ]] && ok "declared: cq-classic.dlq on $node3, cq-quorum.dlq on 3 nodes" ||
	bad "declaring the queues: HTTP $st"

T() { tmux -L "$sock" "$@"; }
tmux_term=tmux-256color
infocmp $tmux_term >/dev/null 2>&1 || tmux_term=screen-256color
T -f /dev/null new-session -d -s q -x 200 -y 30 \
	"cd '$tmp' && env TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term NO_COLOR=1 \
   DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' DLQX_MGMT_URL='$DLQX_NODE3_MGMT_URL, $DLQX_NODE2_MGMT_URL,$DLQX_NODE1_MGMT_URL' \
   DLQX_JOURNAL='$tmp/journal.jsonl' '$dlqx' --read-only --refresh 1 2>'$tmp/ui.err'; echo \$? >'$tmp/ui.status'; sleep 600"
cap() { T capture-pane -p -t q 2>/dev/null; }
row() { cap | grep -E "(^| )cq-$1\.dlq " | head -n 1; }
waitfor() { # seconds, a shell condition; polled every 0.2 s
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do eval "$2" && return 0; sleep 0.2; done
	return 1
}
show() { cap | grep -v '^ *$' | sed 's/^/    /'; }

# ---- every node up -------------------------------------------------------------------------
if waitfor 40 'row classic | grep -q "${node3%%@*}" && row quorum | grep -q "3/3 online"'; then
	ok "all up: cq-classic.dlq on ${node3%%@*}, cq-quorum.dlq 3/3 online"
else
	bad "all up: the rows are not as expected:"
	show
fi
row classic | grep -q "one node" && ok "all up: the classic DLQ is marked as living on one node" ||
	bad "all up: no 'one node' on the classic row: $(row classic)"
cap >"$tmp/up.screen"

# ---- node 3 killed: no key pressed ---------------------------------------------------------
"$broker" cluster kill "$C" 3 >/dev/null 2>&1 || bad "cluster kill 3 failed"
if waitfor 60 'row classic | grep -q UNAVAILABLE'; then
	ok "node 3 killed: cq-classic.dlq is UNAVAILABLE by itself (no key pressed)"
else
	bad "node 3 killed: the classic row is not UNAVAILABLE after 60 s: $(row classic)"
	show
fi
depth=$(row classic | awk '{ for (i = 1; i <= NF; i++) if ($i == "classic") { print $(i + 1); exit } }')
[[ $depth == "?" ]] && ok "node 3 killed: its depth is ?, not 0" ||
	bad "node 3 killed: the classic DLQ's depth shows '$depth', not ?"
if waitfor 30 'row quorum | grep -q "2/3 online"'; then
	ok "node 3 killed: cq-quorum.dlq 2/3 online"
else
	bad "node 3 killed: the quorum row: $(row quorum)"
fi
row quorum | grep -q "member offline" && ok "node 3 killed: the quorum row says a member is offline" ||
	bad "node 3 killed: no 'member offline' on $(row quorum)"
# Keys are answered: the cursor is put on the classic DLQ (j or k: the rows are sorted by depth
# and the order moved when node 3 went, so which row is first is not fixed) and the line above
# the bottom one explains it in full, naming node 3.
explained() { cap | grep -q "^unavailable: its node ${node3} is down"; }
found=0
for key in j k j k; do
	explained && { found=1; break; }
	T send-keys -t q "$key"
	waitfor 3 explained && { found=1; break; }
done
if ((found)); then
	ok "the explanation under the table names ${node3%%@*}"
else
	bad "no explanation naming ${node3} with the cursor on either row:"
	show
fi
cap >"$tmp/down1.screen"

# ---- node 2 killed too: below quorum -------------------------------------------------------
"$broker" cluster kill "$C" 2 >/dev/null 2>&1 || bad "cluster kill 2 failed"
if waitfor 60 'row quorum | grep -q "BELOW QUORUM"'; then
	ok "node 2 killed too: cq-quorum.dlq is BELOW QUORUM"
else
	bad "node 2 killed too: the quorum row: $(row quorum)"
	show
fi
row quorum | grep -q "1/3 online" && ok "node 2 killed too: 1/3 online" ||
	bad "node 2 killed too: not 1/3 online: $(row quorum)"
cap | grep -q STALE && bad "node 2 killed too: the rows are STALE: $(cap | grep STALE)" ||
	ok "node 2 killed too: the rows are fresh (the refresh went on through node 1)"
T send-keys -t q q
waitfor 10 '[ -s "$tmp/ui.status" ]'
[[ $(cat "$tmp/ui.status" 2>/dev/null) == 0 ]] && ok "q: exit 0" ||
	{ bad "q: exit $(cat "$tmp/ui.status" 2>/dev/null)"; cat "$tmp/ui.err"; }
if ((fails)); then
	echo "cluster queues view: $fails failed"
	exit 1
fi
echo "cluster queues view: all passed"
