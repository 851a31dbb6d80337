#!/bin/sh
# dlqx follow against the test broker (run.sh): a producer dead-letters N messages while
# follow --json runs — each arrives once, decoded, and the DLQ keeps its depth and order; the
# tap queue is gone after SIGINT and after SIGKILL; a DLQ fed through the default exchange
# gets the clear message and its depth from the management API.
set -u
dlqx=$1
tmp=$(mktemp -d)
fpid=
trap '[ -n "$fpid" ] && kill -KILL "$fpid" 2>/dev/null; rm -rf "$tmp"' EXIT
password=$(cat "$DLQX_PASSWORD_FILE")
. "$(dirname "$0")/check.sh"
N=${FOLLOW_N:-40}

publish() { # routing key, message id
  mgmt POST "exchanges/%2F/amq.default/publish" \
    "{\"routing_key\":\"$1\",\"payload\":\"{\\\"n\\\":1}\",\"payload_encoding\":\"string\",\"properties\":{\"message_id\":\"$2\",\"content_type\":\"application/json\"}}" >/dev/null
}
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
started() { [ -f "$tmp/err" ] && grep -q 'Ctrl-C ends it' "$tmp/err"; }
ids() { # the DLQ's message ids in order, from a peek
  "$dlqx" peek fl.orders.dlq -o "$tmp/snap" 2>/dev/null &&
    "$dlqx" decode "$tmp/snap" | sed 's/^{"dialect":"[^"]*","id":"\([^"]*\)".*/\1/'
}

# A work queue whose messages expire at once into a direct dead-letter exchange and its DLQ,
# which already holds three dead letters.
mgmt DELETE "queues/%2F/fl.orders" >/dev/null
mgmt DELETE "queues/%2F/fl.orders.dlq" >/dev/null
mgmt PUT "exchanges/%2F/fl.dlx" '{"type":"direct"}' >/dev/null
mgmt PUT "queues/%2F/fl.orders.dlq" '{"durable":true}' >/dev/null
mgmt POST "bindings/%2F/e/fl.dlx/q/fl.orders.dlq" '{"routing_key":"fl.orders"}' >/dev/null
mgmt PUT "queues/%2F/fl.orders" '{"durable":true,"arguments":{"x-message-ttl":0,"x-dead-letter-exchange":"fl.dlx","x-dead-letter-routing-key":"fl.orders"}}' >/dev/null
for i in 1 2 3; do publish fl.orders "old-$i"; done
wait_for 100 sh -c "[ \"\$(\"$dlqx\" queues --no-mgmt --json fl.orders.dlq 2>/dev/null | sed 's/.*\"ready\":\([0-9]*\).*/\1/')\" = 3 ]" ||
  bad "setup: the DLQ does not hold 3 dead letters"
taps0=$(tap_count)

# follow --json while N messages are dead-lettered.
rm -f "$tmp/err"
"$dlqx" follow --json fl.orders.dlq >"$tmp/out" 2>"$tmp/err" </dev/null &
fpid=$!
if wait_for 100 started; then ok; else bad "follow did not start:"; cat "$tmp/err"; fi
if grep -q 'fl.orders.dlq: tapping exchange fl.dlx, routing key "fl.orders"' "$tmp/err" &&
   grep -q 'fl.orders.dlq: fl.orders dead-letters to exchange fl.dlx, routing key "fl.orders"' "$tmp/err"; then ok; else
  bad "follow does not say what it taps:"; cat "$tmp/err"
fi
if [ "$(tap_count)" -eq $((taps0 + 1)) ]; then ok; else bad "tap: $(tap_count) amq.gen queues, expected $((taps0 + 1))"; fi
i=1
while [ $i -le "$N" ]; do publish fl.orders "new-$i"; i=$((i + 1)); done
wait_for 200 sh -c "[ \$(wc -l <\"$tmp/out\") -ge $N ]"
sleep 1 # a duplicate would come now
i=1
missing=0 dup=0
while [ $i -le "$N" ]; do
  c=$(grep -c "\"id\":\"new-$i\"" "$tmp/out")
  [ "$c" -eq 0 ] && missing=$((missing + 1))
  [ "$c" -gt 1 ] && dup=$((dup + 1))
  i=$((i + 1))
done
if [ $missing -eq 0 ] && [ $dup -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq "$N" ]; then ok; else
  bad "arrivals: $missing missing, $dup duplicated, $(wc -l <"$tmp/out") lines for $N"
fi
if grep -q '"id":"old-' "$tmp/out"; then bad "old dead letters were printed"; else ok; fi
# Decoded: the decode record with the broker's reason and the group.
if [ "$(grep -c '"error":"dead-lettered by the broker: expired from fl.orders".*"group":"g:' "$tmp/out")" -eq "$N" ]; then ok; else
  bad "not decoded:"; head -2 "$tmp/out"
fi
# The DLQ: every dead letter still there, in order (old-1..3, new-1..N).
expect=$(i=1; for o in 1 2 3; do echo "old-$o"; done; while [ $i -le "$N" ]; do echo "new-$i"; i=$((i + 1)); done)
got=$(ids)
if [ "$got" = "$expect" ]; then ok; else bad "the DLQ changed: $(echo "$got" | tr '\n' ' ')"; fi

# SIGINT: exit 0, the tap deleted.
kill -INT "$fpid"
wait "$fpid"
rc=$?
fpid=
if [ $rc -eq 0 ]; then ok; else bad "follow after SIGINT: exit $rc"; cat "$tmp/err"; fi
if [ "$(tap_count)" -eq "$taps0" ]; then ok; else bad "the tap is left after SIGINT ($(tap_count) amq.gen queues)"; fi

# SIGKILL: the broker deletes the tap (exclusive, auto-delete) when the connection drops.
rm -f "$tmp/err"
"$dlqx" follow fl.orders.dlq >"$tmp/out" 2>"$tmp/err" </dev/null &
fpid=$!
wait_for 100 started || bad "follow (table) did not start"
publish fl.orders "table-1"
if wait_for 100 grep -q 'table-1' "$tmp/out" && head -1 "$tmp/out" | grep -q '^AGE '; then ok; else
  bad "table: no header or no row:"; cat "$tmp/out"
fi
kill -KILL "$fpid"
wait "$fpid" 2>/dev/null
fpid=
no_taps() { [ "$(tap_count)" -eq "$taps0" ]; }
if wait_for 100 no_taps; then ok; else
  bad "the tap is left after SIGKILL ($(tap_count) amq.gen queues)"
fi

# --filter: only what it selects.
rm -f "$tmp/err"
"$dlqx" follow --json --filter 'id:keep-*' fl.orders.dlq >"$tmp/out" 2>"$tmp/err" </dev/null &
fpid=$!
wait_for 100 started || bad "follow --filter did not start"
publish fl.orders "drop-1"
publish fl.orders "keep-1"
wait_for 100 grep -q 'keep-1' "$tmp/out"
kill -TERM "$fpid"
wait "$fpid"
rc=$?
fpid=
if [ $rc -eq 0 ] && grep -q '"id":"keep-1"' "$tmp/out" && ! grep -q 'drop-1' "$tmp/out"; then ok; else
  bad "--filter (exit $rc):"; cat "$tmp/out"
fi

# A DLQ fed through the default exchange: said, and its depth shown instead.
mgmt PUT "queues/%2F/fl.plain.dlq" '{"durable":true}' >/dev/null
mgmt PUT "queues/%2F/fl.plain" '{"durable":true,"arguments":{"x-message-ttl":0,"x-dead-letter-exchange":"","x-dead-letter-routing-key":"fl.plain.dlq"}}' >/dev/null
rm -f "$tmp/err"
"$dlqx" follow fl.plain.dlq >"$tmp/out" 2>"$tmp/err" </dev/null &
fpid=$!
wait_for 100 sh -c "grep -q 'messages (management API' '$tmp/err' 2>/dev/null"
kill -HUP "$fpid"
wait "$fpid"
rc=$?
fpid=
if [ $rc -eq 0 ] &&
   grep -q 'fl.plain dead-letters to it through the default exchange, which cannot be bound' "$tmp/err" &&
   grep -q 'nothing that feeds it can be tapped' "$tmp/err" &&
   grep -q 'fl.plain.dlq: [0-9-]* messages (management API' "$tmp/err"; then ok; else
  bad "default exchange (exit $rc):"; cat "$tmp/err"
fi
if [ "$(tap_count)" -eq "$taps0" ]; then ok; else bad "a tap is left for the default-exchange DLQ"; fi

# A stream DLQ fed through the default exchange (published to with its name, as frameworks
# that park messages themselves do; the broker here does not dead-letter into streams): the
# offer, then --from-offset next reads what arrives, once each, and the stream keeps all.
mgmt DELETE "queues/%2F/fl.stream.dlq" >/dev/null
mgmt PUT "queues/%2F/fl.stream.dlq" '{"durable":true,"arguments":{"x-queue-type":"stream"}}' >/dev/null
publish fl.stream.dlq "s-old"
rm -f "$tmp/err"
"$dlqx" follow fl.stream.dlq >"$tmp/out" 2>"$tmp/err" </dev/null &
fpid=$!
wait_for 100 started
kill -INT "$fpid"
wait "$fpid"
fpid=
if grep -q 'fl.stream.dlq is a stream: --from-offset next reads' "$tmp/err"; then ok; else
  bad "stream: no offer:"; cat "$tmp/err"
fi
rm -f "$tmp/err"
"$dlqx" follow --json --from-offset next fl.stream.dlq >"$tmp/out" 2>"$tmp/err" </dev/null &
fpid=$!
wait_for 100 started || bad "follow --from-offset did not start"
sleep 0.5 # the offset "next" is taken when the consumer attaches
for i in 1 2 3 4 5; do publish fl.stream.dlq "s-$i"; done
wait_for 100 sh -c "[ \$(wc -l <\"$tmp/out\") -ge 5 ]"
sleep 0.5
kill -INT "$fpid"
wait "$fpid"
rc=$?
fpid=
sids=$(sed 's/^{"dialect":"[^"]*","id":"\([^"]*\)".*/\1/' "$tmp/out" | tr '\n' ' ')
if [ $rc -eq 0 ] && [ "$sids" = "s-1 s-2 s-3 s-4 s-5 " ]; then ok; else
  bad "stream --from-offset next (exit $rc): $sids"; cat "$tmp/err"
fi
# The stream still holds all six, in order: read from its start (a passive declare's count of
# a stream lags, so it is read rather than counted).
rm -f "$tmp/err"
"$dlqx" follow --json --from-offset first fl.stream.dlq >"$tmp/out" 2>"$tmp/err" </dev/null &
fpid=$!
wait_for 100 started
wait_for 100 sh -c "[ \$(wc -l <\"$tmp/out\") -ge 6 ]"
sleep 0.5
kill -INT "$fpid"
wait "$fpid"
fpid=
sids=$(sed 's/^{"dialect":"[^"]*","id":"\([^"]*\)".*/\1/' "$tmp/out" | tr '\n' ' ')
if [ "$sids" = "s-old s-1 s-2 s-3 s-4 s-5 " ]; then ok; else bad "the stream holds: $sids"; fi

check missing 15 'there is no queue "fl.nope"' "$dlqx" follow fl.nope
check no-mgmt 2 'the management API is needed' "$dlqx" follow fl.orders.dlq --no-mgmt

for q in fl.orders fl.orders.dlq fl.plain fl.plain.dlq fl.stream.dlq; do mgmt DELETE "queues/%2F/$q" >/dev/null; done
mgmt DELETE "exchanges/%2F/fl.dlx" >/dev/null
echo "follow_live: $pass passed, $fail failed"
[ $fail -eq 0 ]
