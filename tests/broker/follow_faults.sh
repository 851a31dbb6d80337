#!/bin/sh
# dlqx follow under faults, against the test broker (run.sh), one follow process throughout:
#   1. follow is stopped (SIGSTOP) while 25,000 dead letters flood the DLQ: its tap queue never
#      holds more than its x-max-length (polled with rabbitmqctl, which counts in real time),
#      and after SIGCONT follow goes on, newest last; the DLQ holds all of them, in order;
#   2. a consumer rejects messages (requeue=false) of a queue whose dead-letter exchange feeds
#      the DLQ: follow shows each once, decoded, reason rejected (its x-death kept);
#   3. the node restarts under it: follow says the connection is lost and exits 17
#      (EXIT_CONNECTION_LOST), no tap queue is left, the DLQ keeps its dead letters.
# The flood is dlqx-seed's (--scenario flood): the broker's own dead-lettering, expired.
set -u
dlqx=$1
seed=${DLQX_SEED:?DLQX_SEED: the dlqx-seed binary}
broker="$DLQX_SOURCE_ROOT/scripts/broker"
tmp=$(mktemp -d)
fpid=
spid=
trap '[ -n "$fpid" ] && kill -CONT "$fpid" 2>/dev/null && kill -KILL "$fpid" 2>/dev/null
      [ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null; rm -rf "$tmp"' EXIT
password=$(cat "$DLQX_PASSWORD_FILE")
. "$(dirname "$0")/check.sh"
FLOOD=${FOLLOW_FLOOD:-25000}
LIMIT=10000 # TAP_MAX_LENGTH (src/broker/tap.h)
P=ff-       # dlqx-seed --prefix: ff-flood -> ff-flood.dlx -> ff-flood.dlq
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
started() { grep -q 'Ctrl-C ends it' "$tmp/err" 2>/dev/null; }
gen_queues() { # the server-named queues, one a line
  mgmt_get "queues/%2F?columns=name" | tr '{' '\n' | sed -n 's/.*"name":"\(amq\.gen-[^"]*\)".*/\1/p' | sort
}
ctl_depth() { # queue: its messages now (rabbitmqctl; the management API lags ~5 s)
  "$broker" ctl "$DLQX_BROKER_DIR" list_queues -q name messages 2>/dev/null |
    awk -v q="$1" '$1 == q { print $2 }'
}
dlq_ids() { # the DLQ's message ids in order (a lossless peek)
  rm -f "$tmp/snap"
  "$dlqx" peek ${P}flood.dlq -o "$tmp/snap" >/dev/null 2>&1 &&
    sed -n 's/.*"message_id":"\([^"]*\)".*/\1/p' "$tmp/snap"
}
flood_ids() { sed -n 's/^{"dialect":"[^"]*","id":"\(flood-[0-9]*\)".*/\1/p' "$tmp/out"; }
has_last() { grep -q "\"id\":\"flood-$(printf %07d "$FLOOD")\"" "$tmp/out"; }
ended() { ! kill -0 "$fpid" 2>/dev/null; }
mgmt_up() { mgmt_get overview | grep -q rabbitmq_version; }

# What dlqx-seed's flood declares, declared now (empty) so that follow taps it before the
# flood; and a work queue whose consumer rejects, dead-lettering to the same exchange.
for q in ${P}flood ${P}flood.dlq ${P}work; do mgmt DELETE "queues/%2F/$q" >/dev/null; done
mgmt PUT "exchanges/%2F/${P}flood.dlx" '{"type":"direct","durable":true}' >/dev/null
mgmt PUT "queues/%2F/${P}flood.dlq" '{"durable":true}' >/dev/null
mgmt POST "bindings/%2F/e/${P}flood.dlx/q/${P}flood.dlq" "{\"routing_key\":\"${P}flood.dlq\"}" >/dev/null
mgmt PUT "queues/%2F/${P}flood" "{\"durable\":true,\"arguments\":{\"x-message-ttl\":0,\"x-dead-letter-exchange\":\"${P}flood.dlx\",\"x-dead-letter-routing-key\":\"${P}flood.dlq\"}}" >/dev/null
mgmt PUT "queues/%2F/${P}work" "{\"durable\":true,\"arguments\":{\"x-dead-letter-exchange\":\"${P}flood.dlx\",\"x-dead-letter-routing-key\":\"${P}flood.dlq\"}}" >/dev/null
for i in 1 2 3 4 5; do
  mgmt POST "exchanges/%2F/amq.default/publish" \
    "{\"routing_key\":\"${P}work\",\"payload\":\"{\\\"n\\\":$i}\",\"payload_encoding\":\"string\",\"properties\":{\"message_id\":\"rej-$i\",\"content_type\":\"application/json\",\"delivery_mode\":2}}" >/dev/null
done
gen_queues >"$tmp/gen0"

"$dlqx" follow --json ${P}flood.dlq >"$tmp/out" 2>"$tmp/err" </dev/null &
fpid=$!
if wait_for 100 started; then ok; else bad "follow did not start:"; cat "$tmp/err"; fi
gen_queues >"$tmp/gen1"
tap=$(comm -13 "$tmp/gen0" "$tmp/gen1")
if [ "$(echo "$tap" | grep -c .)" -eq 1 ]; then ok; else bad "not one new tap queue: $tap"; fi

# 1. SIGSTOP, a flood far past the tap's limit, its depth polled; SIGCONT.
kill -STOP "$fpid"
"$seed" --scenario flood --count "$FLOOD" --size 128 --prefix $P >"$tmp/seed" 2>&1 &
spid=$!
max=0 polls=0
while kill -0 "$spid" 2>/dev/null; do
  d=$(ctl_depth "$tap")
  [ -n "$d" ] && [ "$d" -gt "$max" ] && max=$d
  polls=$((polls + 1))
done
wait "$spid"
src=$?
spid=
if [ "$src" -eq 0 ]; then ok; else bad "dlqx-seed flood (exit $src):"; cat "$tmp/seed"; fi
final=$(ctl_depth "$tap")
echo "tap queue while stopped: at most $max over $polls polls during the flood, $final after it"
if [ "$max" -le $LIMIT ] && [ "${final:-0}" -eq $LIMIT ]; then ok; else
  bad "the tap's limit: at most $max during the flood, ${final:-none} after (limit $LIMIT)"
fi
kill -CONT "$fpid"
if wait_for 600 has_last; then ok; else bad "follow did not go on after SIGCONT: $(flood_ids | wc -l) flood lines"; fi
sleep 0.5
flood_ids >"$tmp/fids"
n=$(wc -l <"$tmp/fids")
# What follow saw: increasing, once each, the newest last; fewer than the flood (the tap
# dropped its oldest), at least the tap's limit.
if sort -c -u "$tmp/fids" 2>/dev/null && [ "$n" -ge $LIMIT ] && [ "$n" -lt "$FLOOD" ]; then ok; else
  bad "after SIGCONT: $n flood lines (expected $LIMIT..$FLOOD, increasing, once each)"
fi
if kill -0 "$fpid" 2>/dev/null; then ok; else bad "follow ended after the flood"; cat "$tmp/err"; fi
seq -f 'flood-%07g' 1 "$FLOOD" >"$tmp/want"
dlq_ids >"$tmp/got"
if cmp -s "$tmp/want" "$tmp/got"; then ok; else bad "the DLQ after the flood: $(wc -l <"$tmp/got") ids, not all in order"; fi

# 2. Rejected by a consumer (the management API's get: basic.get, then basic.reject with
# requeue=false): dead-lettered by the broker, reason rejected.
mgmt POST "queues/%2F/${P}work/get" '{"count":5,"ackmode":"reject_requeue_false","encoding":"auto"}' >/dev/null
rejected() { [ "$(grep -c '"id":"rej-' "$tmp/out")" -ge 5 ]; }
wait_for 100 rejected
sleep 0.5 # a duplicate would come now
n_ok=0
for i in 1 2 3 4 5; do
  [ "$(grep -c "\"id\":\"rej-$i\"" "$tmp/out")" -eq 1 ] &&
    grep "\"id\":\"rej-$i\"" "$tmp/out" | grep "\"error\":\"dead-lettered by the broker: rejected from ${P}work\"" |
    grep -q '"death":{"count":1,"reasons":\["rejected"\]' && n_ok=$((n_ok + 1))
done
if [ $n_ok -eq 5 ] && [ "$(grep -c -v '"id":"flood-' "$tmp/out")" -eq 5 ]; then ok; else
  bad "rejected: $n_ok of 5 once each, decoded, reason rejected:"; grep -v '"id":"flood-' "$tmp/out"
fi
seq -f 'rej-%g' 1 5 >>"$tmp/want"

# 3. The node restarts under follow.
"$broker" restart "$DLQX_BROKER_DIR" >"$tmp/restart" 2>&1 || { bad "restart:"; cat "$tmp/restart"; }
wait_for 300 ended
if ended; then
  wait "$fpid"
  rc=$?
  fpid=
else
  rc=running
fi
if [ "$rc" = 17 ] && grep -q 'closed the connection while reading the tap' "$tmp/err" &&
   grep -q 'the connection is lost: the broker deleted the tap with it and the DLQ keeps' "$tmp/err"; then ok; else
  bad "follow across a restart (exit $rc):"; cat "$tmp/err"
fi
wait_for 300 mgmt_up || bad "the management API is not back"
gen_queues >"$tmp/gen2"
if cmp -s "$tmp/gen0" "$tmp/gen2" && [ -z "$(ctl_depth "$tap")" ]; then ok; else
  bad "a tap is left after the restart: $(comm -13 "$tmp/gen0" "$tmp/gen2")"
fi
dlq_ids >"$tmp/got"
if cmp -s "$tmp/want" "$tmp/got"; then ok; else bad "the DLQ after the restart: $(wc -l <"$tmp/got") ids, not all in order"; fi

for q in ${P}flood ${P}flood.dlq ${P}work; do mgmt DELETE "queues/%2F/$q" >/dev/null; done
mgmt DELETE "exchanges/%2F/${P}flood.dlx" >/dev/null
echo "follow_faults: $pass passed, $fail failed"
[ $fail -eq 0 ]
