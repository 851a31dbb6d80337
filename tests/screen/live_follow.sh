#!/usr/bin/env bash
# The explorer's live mode (L) and its report (E) against a live broker, as a person sees it
# (issue 14): dlqx on a DLQ fed by a work queue whose messages expire into it (Spring-style
# x-exception-* headers, so each carries its error), then L while a producer dead-letters
# messages — the arrivals show in the messages view marked "+", the title says LIVE and how
# many, the groups view's count moves (with its /MIN column), the timeline counts them, a
# message with an error not seen before is flagged "new cause: …" on the bottom line; the DLQ
# keeps every dead letter in order (a tap copies, nothing is taken); L again and q leave no
# tap queue; E writes the report (markdown and html by the name). A file source and a DLQ fed
# through the default exchange say why they cannot be followed. Ctrl-C while following leaves
# no tap either.
#
# A private RabbitMQ node is started for it (scripts/broker) and stopped afterwards;
# DLQX_TEST_BROKER_DIR uses a node already running instead. Without RabbitMQ, tmux or curl it
# fails, as the broker suites do.
#
# usage: tests/screen/live_follow.sh DLQX SOURCE_ROOT
# environment: LIVE_KEEP=1 keeps the scratch directory (the screens captured)
set -u
dlqx=$1
root=$2
for tool in tmux curl; do
  command -v $tool >/dev/null || { echo "live-follow: FAIL: $tool is not installed"; exit 1; }
done
rmq=${DLQX_RABBITMQ_BIN:-/usr/lib/rabbitmq/bin}
if [ -z "${DLQX_TEST_BROKER_DIR:-}" ] && ! [ -x "$rmq/rabbitmq-server" ]; then
  echo "live-follow: FAIL: RabbitMQ is not installed (no $rmq/rabbitmq-server)"
  exit 1
fi
tmp=$(mktemp -d)
sock=dlqx-lf-$$
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/reap.sh"
screen_tag_init
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null
  screen_reap live-follow
  screen_broker_stop
  if [ "${LIVE_KEEP:-}" = 1 ]; then echo "live-follow: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
screen_broker live-follow
password=$(cat "$DLQX_PASSWORD_FILE")

# mgmt, mgmt_get, tap_count, depth and wait_for: the broker suites' own (check.sh).
. "$root/tests/broker/check.sh"
taps_are() { [ "$(tap_count)" -eq "$1" ]; }
ids() { "$dlqx" peek "$1" -o "$tmp/ids.jsonl" 2>/dev/null && grep -o '"message_id":"[^"]*"' "$tmp/ids.jsonl"; }
publish() { # routing key, message id, error (one dead letter through the work queue)
  mgmt POST "exchanges/%2F/amq.default/publish" \
    "{\"routing_key\":\"$1\",\"payload\":\"{\\\"n\\\":1}\",\"payload_encoding\":\"string\",\"properties\":{\"message_id\":\"$2\",\"content_type\":\"application/json\",\"type\":\"OrderPlaced\",\"headers\":{\"x-exception-message\":\"$3\",\"x-exception-stacktrace\":\"java.lang.IllegalStateException: $3\\n\\tat com.acme.Orders.place(Orders.java:42)\"}}}" >/dev/null
}

# ---- a DLQ fed through a direct dead-letter exchange, and one through the default exchange --
p=lf$$
dlq=$p.orders.dlq
mgmt PUT "exchanges/%2F/$p.dlx" '{"type":"direct"}' >/dev/null
mgmt PUT "queues/%2F/$dlq" '{"durable":true}' >/dev/null
mgmt POST "bindings/%2F/e/$p.dlx/q/$dlq" "{\"routing_key\":\"$p.orders\"}" >/dev/null
mgmt PUT "queues/%2F/$p.orders" "{\"durable\":true,\"arguments\":{\"x-message-ttl\":0,\"x-dead-letter-exchange\":\"$p.dlx\",\"x-dead-letter-routing-key\":\"$p.orders\"}}" >/dev/null
mgmt PUT "queues/%2F/$p.plain.dlq" '{"durable":true}' >/dev/null
mgmt PUT "queues/%2F/$p.plain" "{\"durable\":true,\"arguments\":{\"x-message-ttl\":0,\"x-dead-letter-exchange\":\"\",\"x-dead-letter-routing-key\":\"$p.plain.dlq\"}}" >/dev/null
cause_a="payment gateway timed out after 30 s"
cause_b="inventory service refused the reservation for sku 7781"
for i in 1 2 3; do publish "$p.orders" "old-$i" "$cause_a"; done
publish "$p.plain" plain-1 "$cause_a"
wait_for 100 sh -c "[ \"\$(\"$dlqx\" queues --no-mgmt --json $dlq 2>/dev/null | sed 's/.*\"ready\":\([0-9]*\).*/\1/')\" = 3 ]" &&
  ok "setup: $dlq holds 3 dead letters" || bad "setup: $dlq holds $(depth "$dlq"), not 3"
taps0=$(tap_count)

tmux_term=tmux-256color
infocmp $tmux_term >/dev/null 2>&1 || tmux_term=screen-256color
T() { tmux -L "$sock" "$@"; }
start() { # session, extra environment and arguments...
  s=$1
  shift
  T -f /dev/null new-session -d -s "$s" -x 200 -y 40 \
    "cd '$tmp' && env TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term NO_COLOR=1 \
     DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' DLQX_MGMT_URL='$DLQX_MGMT_URL' \
     DLQX_JOURNAL='$tmp/journal.jsonl' '$dlqx' $* 2>'$tmp/$s.err'; echo \$? >'$tmp/$s.status'; sleep 600"
  T set-option -t "$s" status off >/dev/null
}
cap() { T capture-pane -p -t "$1" 2>/dev/null; }
await() { # session, extended regex, tries (tenths)
  for _ in $(seq 1 "$3"); do cap "$1" | grep -Eq -- "$2" && return 0; sleep 0.1; done
  return 1
}
keys() { T send-keys -t "$@"; }

# ---- L: arrivals in the messages view --------------------------------------------------
start t "$dlq"
await t "complete: 3 of 3 messages" 200 || { bad "no snapshot of $dlq:"; cap t | tail -3; }
keys t L
if await t "^ dlqx  messages  $dlq .*LIVE 0 new 0/min  3 messages" 100; then
  ok "L: the title says LIVE"
else
  bad "L: no LIVE in the title:"; cap t | head -1; cap t | tail -1
fi
cap t | tail -1 | grep -q "LIVE: following $dlq with a tap of dlqx's own" &&
  ok "L: the bottom line says what it follows" || { bad "L: the bottom line:"; cap t | tail -1; }
[ "$(tap_count)" -eq $((taps0 + 1)) ] && ok "L: one tap queue" || bad "L: $(tap_count) tap queues, not $((taps0 + 1))"
N=12
for i in $(seq 1 $N); do publish "$p.orders" "new-$i" "$cause_a"; done
if await t "LIVE $N new [0-9]+/min  $((N + 3)) messages" 150; then
  ok "arrivals: the title counts $N new of $((N + 3))"
else
  bad "arrivals: the title:"; cap t | head -1
fi
# The rows may be drawn a moment after the title (a capture can fall between the two).
wait_for 50 sh -c "[ \$(tmux -L '$sock' capture-pane -p -t t | grep -Ec '^\\+[0-9.]+[smh] .* new-[0-9]+ ') -eq $N ]"
cap t >"$tmp/messages.screen"
marked=$(grep -Ec '^\+[0-9.]+[smh] .* new-[0-9]+ ' "$tmp/messages.screen")
unmarked_old=$(grep -E ' old-[0-9] ' "$tmp/messages.screen" | grep -Evc '^\+')
[ "$marked" -eq $N ] && ok "messages: the $N arrivals are marked +" ||
  { bad "messages: $marked arrivals marked + of $N:"; sed -n 2,20p "$tmp/messages.screen"; }
[ "$unmarked_old" -eq 3 ] && ok "messages: the snapshot's 3 are not marked" ||
  bad "messages: $unmarked_old of the snapshot's rows unmarked, not 3"
grep -q "new cause" "$tmp/messages.screen" && bad "a known cause was flagged new" ||
  ok "no new-cause flag for a cause the snapshot had"

# ---- the groups view: the count moves --------------------------------------------------
keys t 3
grow=$((N + 3))
if await t "^ +$grow +[0-9.-]+ +[0-9.]+[smh] .*payment gateway timed out" 50; then
  ok "groups: the cause counts $grow, with its /MIN"
else
  bad "groups: no row of $grow:"; cap t | sed -n 1,5p
fi
cap t | sed -n 2p | grep -q "COUNT    /MIN  FIRST" && ok "groups: the /MIN column while live" ||
  bad "groups: no /MIN column: $(cap t | sed -n 2p)"
for i in 1 2 3 4 5; do publish "$p.orders" "more-$i" "$cause_a"; done
grow=$((grow + 5))
await t "^ +$grow +[0-9.]+ +[0-9.]+[smh] .*payment gateway timed out" 100 &&
  ok "groups: the count moves to $grow while the view is open" ||
  { bad "groups: the count did not move to $grow:"; cap t | sed -n 2,4p; }
cap t >"$tmp/groups.screen"

# ---- a new cause -------------------------------------------------------------------------
publish "$p.orders" "other-1" "$cause_b"
if await t "new cause: java\.lang\.IllegalStateException: inventory service refused the reservation for sku <n>  in $dlq" 100; then
  ok "new cause: flagged on the bottom line"
else
  bad "new cause: not flagged:"; cap t | tail -1
fi
cap t >"$tmp/newcause.screen"
await t "^ +1 +[0-9.]+ +[0-9.]+[smh] .*inventory service refused" 50 &&
  ok "groups: the new cause has its row" || bad "groups: no row for the new cause"
total=$((grow + 1))

# ---- the timeline counts them ------------------------------------------------------------
keys t 5
await t "$total dated, 0 undated" 50 && ok "timeline: $total dated, the arrivals with them" ||
  { bad "timeline: not $total dated:"; cap t | tail -1; }

# ---- E: the report ----------------------------------------------------------------------
keys t E
await t "report to \(FILE.md or FILE.html\):" 30 || bad "E: no prompt"
keys t "$tmp/incident.md" Enter
if await t "report of $total dead letters written to $tmp/incident.md \(markdown\)" 50; then
  ok "E: the bottom line says where the report went"
else
  bad "E: the bottom line:"; cap t | tail -1
fi
if [ -s "$tmp/incident.md" ] && grep -q "$dlq" "$tmp/incident.md" &&
   grep -q "inventory service refused" "$tmp/incident.md" && grep -q "| $grow |" "$tmp/incident.md"; then
  ok "E: the markdown report names the queue and both causes ($grow and 1)"
else
  bad "E: the markdown report:"; head -30 "$tmp/incident.md" 2>/dev/null
fi
keys t E
keys t "$tmp/incident.html" Enter
await t "written to $tmp/incident.html \(html\)" 50 && grep -q "<svg" "$tmp/incident.html" &&
  ok "E: an html report with its plot" || { bad "E: the html report:"; cap t | tail -1; }
mkfifo "$tmp/fifo"
keys t E
keys t "$tmp/fifo" Enter
await t "is not a regular file" 50 && ok "E: a FIFO is refused" || { bad "E: a FIFO:"; cap t | tail -1; }

# ---- L again: stopped, the tap gone; the DLQ untouched ------------------------------------
keys t 2 L
await t "live: stopped following \(the tap is deleted\)" 50 && ok "L again: stopped" ||
  { bad "L again:"; cap t | tail -1; }
wait_for 50 taps_are "$taps0" &&
  ok "L again: no tap queue left" || bad "L again: $(tap_count) tap queues, not $taps0"
cap t | head -1 | grep -q LIVE && bad "L again: the title still says LIVE" || ok "L again: no LIVE in the title"
expect=$( (for i in 1 2 3; do echo "old-$i"; done; for i in $(seq 1 $N); do echo "new-$i"; done
  for i in 1 2 3 4 5; do echo "more-$i"; done; echo other-1) | sed 's/.*/"message_id":"&"/')
got=$(ids "$dlq")
[ "$got" = "$expect" ] && ok "the DLQ: all $total dead letters, in order (the tap took none)" ||
  bad "the DLQ changed: $(echo "$got" | tr '\n' ' ' | cut -c1-200)"
keys t L
await t "LIVE 0 new|LIVE [0-9]+ new" 50 && ok "L once more: following again" || bad "L once more"
keys t q
wait_for 100 test -s "$tmp/t.status"
[ "$(cat "$tmp/t.status" 2>/dev/null)" = 0 ] && ok "q: exit 0" || bad "q: exit $(cat "$tmp/t.status" 2>/dev/null)"
wait_for 50 taps_are "$taps0" &&
  ok "q while following: no tap queue left" || bad "q while following: $(tap_count) tap queues"

# ---- Ctrl-C while following -------------------------------------------------------------
start c "$dlq"
await c "complete: $total of $total messages" 200 || bad "Ctrl-C: no snapshot"
keys c L
await c "LIVE 0 new" 50 || bad "Ctrl-C: no LIVE"
[ "$(tap_count)" -eq $((taps0 + 1)) ] || bad "Ctrl-C: no tap before"
keys c C-c
wait_for 100 test -s "$tmp/c.status"
[ "$(cat "$tmp/c.status" 2>/dev/null)" = 0 ] && ok "Ctrl-C while following: exit 0" ||
  bad "Ctrl-C: exit $(cat "$tmp/c.status" 2>/dev/null)"
[ "$(tap_count)" -eq "$taps0" ] && ok "Ctrl-C while following: no tap queue left" || bad "Ctrl-C: $(tap_count) tap queues"

# ---- what cannot be followed -------------------------------------------------------------
start d "$p.plain.dlq"
await d "complete: 1 of 1 messages" 200 || bad "default exchange: no snapshot"
keys d L
await d "live: nothing that feeds $p.plain.dlq can be tapped .*default exchange" 50 &&
  ok "a DLQ fed through the default exchange: said, not followed" ||
  { bad "default exchange:"; cap d | tail -1; }
cap d | head -1 | grep -q LIVE && bad "default exchange: LIVE in the title" || ok "default exchange: no LIVE"
keys d q
"$dlqx" peek "$dlq" -o "$tmp/snap.jsonl" 2>/dev/null
T -f /dev/null new-session -d -s f -x 140 -y 40 \
  "cd '$tmp' && env TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term NO_COLOR=1 '$dlqx' open '$tmp/snap.jsonl' 2>'$tmp/f.err'; echo \$? >'$tmp/f.status'; sleep 600"
await f "complete|$total messages" 100 || bad "file: nothing read"
keys f L
await f "live needs a broker" 50 && ok "a file source: live needs a broker" || { bad "file:"; cap f | tail -1; }
keys f q

echo "live-follow: $pass passed, $fail failed"
[ $fail -eq 0 ]
