#!/usr/bin/env bash
# The explorer against a live broker, as a person sees it: `dlqx QUEUE` on a queue big enough
# that its snapshot takes a while. While the peek runs the bottom line is a progress bar (the
# count of the total, the rate, the ETA, the bar); Esc stops it, the screen says every message
# was given back, and the queue is as it was: the same depth (passive declare, through
# `dlqx queues --json`) and the same messages in the same order (`dlqx peek -o` before and
# after, message ids compared line by line).
#
# A private RabbitMQ node is started for it (scripts/broker, docs/broker.md) and stopped
# afterwards; DLQX_TEST_BROKER_DIR uses a node already running instead. Without RabbitMQ or
# tmux it fails, as the broker suites do (a test that did not run never counts as passed;
# scripts/deps installs both).
#
# usage: tests/screen/live.sh DLQX DLQX_SEED SOURCE_ROOT
# environment: LIVE_N messages to seed (default 100000, of 128 bytes: the bar shows for a few
#   seconds), LIVE_KEEP=1 keeps the scratch directory (the screens captured)
set -u
dlqx=$1
seed=$2
root=$3
n=${LIVE_N:-100000}
command -v tmux >/dev/null || { echo "live: FAIL: tmux is not installed (apt-get install tmux)"; exit 1; }
rmq=${DLQX_RABBITMQ_BIN:-/usr/lib/rabbitmq/bin}
if [ -z "${DLQX_TEST_BROKER_DIR:-}" ] && ! [ -x "$rmq/rabbitmq-server" ]; then
  echo "live: FAIL: RabbitMQ is not installed (no $rmq/rabbitmq-server): apt-get install" \
    "rabbitmq-server, or scripts/deps"
  exit 1
fi
tmp=$(mktemp -d)
sock=dlqx-live-$$
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/reap.sh"
screen_tag_init
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null
  screen_reap live
  screen_broker_stop
  if [ "${LIVE_KEEP:-}" = 1 ]; then echo "live: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
screen_broker live
queue=live-bulk.dlq

# ---- a queue worth waiting for ----------------------------------------------------------
if ! "$seed" --scenario bulk --prefix live- --count "$n" --size 128 --window 2000 \
  >"$tmp/seed.out" 2>&1; then
  echo "live: seeding failed:"
  tail -5 "$tmp/seed.out"
  exit 1
fi
depth() { "$dlqx" queues --no-mgmt --json "$queue" 2>/dev/null | sed -n 's/.*"ready":\([0-9]*\).*/\1/p'; }
ids() { grep -o '"message_id":"[^"]*"' "$1"; }
before=$(depth)
if [ "$before" = "$n" ]; then ok "seeded: $queue holds $n messages"; else bad "seeded: $queue holds ${before:-?}, not $n"; fi
"$dlqx" peek "$queue" -o "$tmp/before.jsonl" 2>"$tmp/peek-before.err" ||
  bad "peek before: $(tail -1 "$tmp/peek-before.err")"
ids "$tmp/before.jsonl" >"$tmp/before.ids"
[ "$(wc -l <"$tmp/before.ids")" -eq "$n" ] && ok "peek before: $n message ids, in queue order" ||
  bad "peek before: $(wc -l <"$tmp/before.ids") message ids of $n"

# ---- the explorer on it -----------------------------------------------------------------
tmux_term=tmux-256color
infocmp $tmux_term >/dev/null 2>&1 || tmux_term=screen-256color
T() { tmux -L "$sock" "$@"; }
capture() { T capture-pane -p -t t 2>/dev/null; }
T -f /dev/null new-session -d -s t -x 120 -y 40 \
  "cd '$tmp' && env DLQX_NOW=1767330000000 TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term \
   NO_COLOR=1 DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' \
   DLQX_MGMT_URL='$DLQX_MGMT_URL' '$dlqx' '$queue' 2>'$tmp/ui.err'; echo \$? >'$tmp/ui.status'; sleep 600"
T set-option -t t status off >/dev/null

# The bar: " peek QUEUE DONE/TOTAL  RATE msg/s  ETA T  (Esc cancels) [███   ]", with some
# done and some to go.
bar="^ peek $queue ([0-9]+)/$n  [0-9]+ msg/s  ETA [0-9][0-9a-z.]*  \(Esc cancels\) \[█+ *\] *$"
seen=0
for _ in $(seq 1 600); do
  line=$(capture | tail -n 1)
  if [[ $line =~ $bar ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[1]}" -lt "$n" ]; then
    seen=1
    break
  fi
  [ -s "$tmp/ui.status" ] && break
  sleep 0.05
done
capture >"$tmp/peeking.screen"
if [ $seen -eq 1 ]; then
  ok "the progress bar while peeking: ${line%% (Esc*}"
else
  bad "no progress bar with count, rate and ETA; the last line was:"
  echo "      [$line]"
fi

# Esc stops it; the screen says every message went back.
T send-keys -t t Escape
said=0
for _ in $(seq 1 300); do
  capture | tail -n 1 | grep -q "cancelled: every message was given back" && { said=1; break; }
  sleep 0.1
done
capture >"$tmp/cancelled.screen"
if [ $said -eq 1 ]; then
  ok "Esc: $(tail -n 1 "$tmp/cancelled.screen" | sed 's/^ *//' | cut -c1-110)"
else
  bad "after Esc the screen does not say the peek was cancelled:"
  tail -n 3 "$tmp/cancelled.screen"
fi
head -n 1 "$tmp/cancelled.screen" | grep -q " dlqx  messages  $queue" &&
  ok "after Esc: the messages view of $queue, with what was read" ||
  bad "after Esc: not the messages view: $(head -n 1 "$tmp/cancelled.screen")"
T send-keys -t t q
for _ in $(seq 1 100); do [ -s "$tmp/ui.status" ] && break; sleep 0.1; done
[ "$(cat "$tmp/ui.status" 2>/dev/null)" = 0 ] && ok "q: dlqx exited 0" ||
  bad "dlqx did not exit 0 on q (status: $(cat "$tmp/ui.status" 2>/dev/null))"

# ---- the queue as it was ----------------------------------------------------------------
after=$(depth)
[ "$after" = "$before" ] && ok "depth after: $after, as before" ||
  bad "depth after: ${after:-?}, before: $before"
"$dlqx" peek "$queue" -o "$tmp/after.jsonl" 2>"$tmp/peek-after.err" ||
  bad "peek after: $(tail -1 "$tmp/peek-after.err")"
ids "$tmp/after.jsonl" >"$tmp/after.ids"
if cmp -s "$tmp/before.ids" "$tmp/after.ids"; then
  ok "order after: the same $(wc -l <"$tmp/after.ids") message ids in the same order"
else
  bad "order after: the message ids differ from before:"
  diff "$tmp/before.ids" "$tmp/after.ids" | head -5
fi
# SIGTERM while the explorer peeks: the peek stops as Esc stops it (every message given
# back: the same depth, the same order), the terminal is restored, and dlqx exits 0.
T -f /dev/null new-session -d -s p -x 120 -y 40 \
  "cd '$tmp' && env TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term NO_COLOR=1 \
   DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' '$dlqx' '$queue' \
   2>'$tmp/ui-p.err'; echo \$? >'$tmp/ui-p.status'; sleep 600"
peeking=0
for _ in $(seq 1 600); do
  T capture-pane -p -t p 2>/dev/null | tail -n 1 | grep -q "^ peek $queue [1-9][0-9]*/$n " && { peeking=1; break; }
  sleep 0.05
done
ptty=$(T display -p -t p '#{pane_tty}')
kill -TERM "$(ps -o pid= --ppid "$(T display -p -t p '#{pane_pid}')" | head -n 1 | tr -d ' ')"
for _ in $(seq 1 300); do [ -s "$tmp/ui-p.status" ] && break; sleep 0.1; done
if [ $peeking -eq 1 ] && [ "$(cat "$tmp/ui-p.status" 2>/dev/null)" = 0 ]; then
  ok "SIGTERM while peeking: dlqx exited 0"
else
  bad "SIGTERM while peeking (bar seen: $peeking): exit status $(cat "$tmp/ui-p.status" 2>/dev/null)"
fi
[ "$(T display -p -t p '#{alternate_on}')" = 0 ] && stty -F "$ptty" -a | grep -q ' icanon ' &&
  ok "SIGTERM while peeking: the terminal is restored" || bad "SIGTERM while peeking: the terminal is not restored"
T kill-session -t p
"$dlqx" peek "$queue" -o "$tmp/after-term.jsonl" 2>/dev/null
ids "$tmp/after-term.jsonl" >"$tmp/after-term.ids"
cmp -s "$tmp/before.ids" "$tmp/after-term.ids" &&
  ok "SIGTERM while peeking: every message given back, in order" ||
  bad "SIGTERM while peeking: the queue changed ($(wc -l <"$tmp/after-term.ids") ids of $n)"

# ---- a replay from the explorer ---------------------------------------------------------
# R on a dead letter: the plan (the copy's diff, its target and whether it routes) and
# nothing sent; y sends it; the DLQ loses exactly that message, its source gains it, and the
# journal has the run.
if "$seed" --prefix lr- >"$tmp/seed2.out" 2>&1; then ok "seeded an incident (lr-)"; else bad "seed lr-"; fi
rq=lr-orders.dlq
rdepth() { "$dlqx" queues --no-mgmt --json "$1" 2>/dev/null | sed -n 's/.*"ready":\([0-9]*\).*/\1/p'; }
r_before=$(rdepth $rq)
# $EDITOR (b in the plan) lists what it was given open, and fails: the body stays as it was.
printf '#!/bin/sh\nls -l /proc/self/fd >"%s/editor.fds"\nexit 3\n' "$tmp" >"$tmp/editor.sh"
chmod +x "$tmp/editor.sh"
T -f /dev/null new-session -d -s r -x 120 -y 40 \
  "cd '$tmp' && env DLQX_NOW=1767330000000 TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term \
   NO_COLOR=1 DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' VISUAL= \
   EDITOR='$tmp/editor.sh' DLQX_JOURNAL='$tmp/journal.jsonl' '$dlqx' '$rq' 2>'$tmp/ui2.err'; \
   echo \$? >'$tmp/ui2.status'; sleep 600"
rcap() { T capture-pane -p -t r 2>/dev/null; }
waitfor() { # text, tries of 0.1 s
  for _ in $(seq 1 "$2"); do rcap | grep -q -- "$1" && return 0; sleep 0.1; done
  return 1
}
waitfor " dlqx  messages  $rq" 300 && ok "the explorer on $rq" || bad "no messages view of $rq"
# The list shows as the snapshot is read: what follows needs all of it.
waitfor "$rq: complete: " 300 || bad "the snapshot of $rq did not complete"
waitfor "\[read-write\]" 10 && ok "the title says the connection is writable" || bad "no [read-write] in the title"
rcap >"$tmp/list-before.screen"
r_listed=$(sed -n '1s/.* \([0-9][0-9]*\) messages *$/\1/p' "$tmp/list-before.screen")
T send-keys -t r R
if waitfor "replay this message of $rq: 1 to send, 0 kept" 100; then ok "R: the plan of one copy"; else
  bad "R: no plan:"; rcap | head -5; fi
rcap >"$tmp/plan.screen"
grep -q "routes: the default exchange delivers to queue lr-orders" "$tmp/plan.screen" &&
  ok "the plan says the target routes" || bad "the plan does not say whether the target routes"
grep -q "x-acemq-attempt" "$tmp/plan.screen" && ok "the plan shows the copy's headers" ||
  bad "the plan shows no headers"
# The editor inherits none of dlqx's files: not the store's temporary file (every body), not
# the file standard error is kept in under curses, not the saved standard error; its own
# standard error is dlqx's (ui2.err here), not the file.
T send-keys -t r b
waitfor "the editor .* failed (exit status 3)" 100 || bad "b: the editor's failure is not said"
if [ -s "$tmp/editor.fds" ]; then
  if grep -q -e '(deleted)' -e 'dlqx-' "$tmp/editor.fds"; then
    bad "the editor inherited dlqx's files:"; grep -e '(deleted)' -e 'dlqx-' "$tmp/editor.fds"
  else
    ok "the editor inherits no temporary file of dlqx's"
  fi
  [ "$(grep -c 'ui2.err' "$tmp/editor.fds")" = 1 ] && grep -q ' 2 -> .*/ui2.err$' "$tmp/editor.fds" &&
    ok "the editor's standard error is dlqx's own, once" ||
    bad "the editor's standard error: $(grep -e ' 2 -> ' -e ui2.err "$tmp/editor.fds")"
else
  bad "b: the editor did not run"
fi
[ "$(rdepth $rq)" = "$r_before" ] && ok "nothing sent before y" || bad "the DLQ changed before y"
T send-keys -t r y
if waitfor "done 1   kept 0   unknown 0" 300; then ok "y: the copy was sent and confirmed"; else
  bad "y: no summary:"; rcap | head -8; fi
rcap >"$tmp/replayed.screen"
[ "$(rdepth $rq)" = "$((r_before - 1))" ] && ok "the DLQ lost exactly one message" ||
  bad "the DLQ holds $(rdepth $rq), not $((r_before - 1))"
[ "$(rdepth lr-orders)" = 1 ] && ok "the source queue holds the copy" || bad "the source holds $(rdepth lr-orders)"
grep -q '"kind":"outcome".*"result":"done"' "$tmp/journal.jsonl" 2>/dev/null &&
  ok "the journal has the outcome" || bad "no outcome in the journal"
grep -q "the dead letter taken out is no longer listed" "$tmp/replayed.screen" &&
  ok "the summary says the list loses it" || bad "the summary does not say what the list shows"
# Back on the list: the replayed dead letter is gone from it, the title says so, and the
# forest still has it, marked.
gone_id=$(sed -n 's/.*"kind":"intent".*"old_id":"\([^"]*\)".*/\1/p' "$tmp/journal.jsonl" | head -1)
gone_short=${gone_id:0:12} # the list's ID column is cut at 120 columns
if [ -n "$gone_id" ] && grep -q -- "$gone_short" "$tmp/list-before.screen"; then
  ok "the dead letter was listed before ($gone_id)"
else
  bad "the dead letter replayed ('$gone_id') was not on the list before"
fi
T send-keys -t r Escape
if waitfor " dlqx  messages  $rq .* $((r_listed - 1)) messages (1 gone since the snapshot)" 50; then
  ok "the title counts $((r_listed - 1)) messages and one gone"
else
  bad "the title after the replay:"; rcap | head -1
fi
rcap >"$tmp/list-after.screen"
if [ -n "$gone_id" ] && ! grep -q -- "$gone_short" "$tmp/list-after.screen"; then
  ok "the replayed dead letter is no longer listed"
else
  bad "the replayed dead letter is still listed"
fi
# The whole forest (t on a message, t again), then / to the dead letter: marked, not lost.
T send-keys -t r t
waitfor " dlqx  tree " 100 || bad "t: no tree view"
# t again: the whole forest — waited for by what only it shows (its header counts every
# correlation and message), not by text the one group's screen has too.
T send-keys -t r t
waitfor "^  [1-9][0-9]* correlations*  [1-9][0-9]* messages*  " 100 ||
  bad "t again: not the whole forest: $(rcap | sed -n 2p)"
T send-keys -t r / "$gone_id" Enter
if waitfor "$gone_id.*(replayed: no longer in the queue)" 100; then
  ok "the forest marks it replayed"
else
  bad "the forest does not mark it:"; rcap | head -12
fi
rcap >"$tmp/tree-gone.screen"
# The plan of the hostile dead letter (escapes, an OSC title, a bidi override in its type,
# error and body): every byte shown as a visible escape (had \e[2J\e[H reached the terminal,
# the screen would have been cleared and the title line lost), the columns still in line,
# and Esc sends nothing.
T send-keys -t r Escape
waitfor " dlqx  messages  $rq" 50 || bad "Esc: not back on the messages"
h_before=$(rdepth $rq)
T send-keys -t r / owned Enter
waitfor "owned" 50 >/dev/null
T send-keys -t r R
if waitfor "replay this message of $rq" 100; then
  rcap >"$tmp/plan-hostile.screen"
  if grep -q 'x-acemq-type .*string:order.placed\\e\[2J' "$tmp/plan-hostile.screen" &&
    head -1 "$tmp/plan-hostile.screen" | grep -q "^ dlqx  plan  $rq"; then
    ok "the hostile plan shows its escapes as text; the title is dlqx's"
  else
    bad "the hostile plan:"; head -30 "$tmp/plan-hostile.screen"
  fi
  # Every diff row's second column starts at the same place: "X NAME(24) OLD(44) NEW".
  misaligned=$(python3 - "$tmp/plan-hostile.screen" <<'PY'
import re, sys
# Diff rows: a mark, the name in 24 columns, the dead letter's value in 44, the copy's. The
# screen holds no wide characters here: one character, one column.
bad = 0
for line in open(sys.argv[1], encoding="utf-8").read().split("\n"):
    if not re.match(r"[~+ -] (x-|acemq-|content_|message_id|delivery_mode|routing_key|exchange)",
                    line):
        continue
    if len(line) > 26 and line[26] != " ":
        bad += 1
    elif len(line) > 72 and line[71] != " ":
        bad += 1
print(bad)
PY
)
  [ "$misaligned" = 0 ] && ok "the plan's columns line up on hostile bytes" ||
    bad "$misaligned diff rows out of line"
else
  bad "R on the hostile dead letter: no plan"; rcap | head -5
fi
T send-keys -t r Escape
waitfor " dlqx  messages  $rq" 50 || bad "Esc in the plan: not back on the messages"
[ "$(rdepth $rq)" = "$h_before" ] && ok "Esc in the plan sent nothing" || bad "the DLQ changed after Esc"
T send-keys -t r Escape q
for _ in $(seq 1 100); do [ -s "$tmp/ui2.status" ] && break; sleep 0.1; done
[ "$(cat "$tmp/ui2.status" 2>/dev/null)" = 0 ] && ok "q: dlqx exited 0" || bad "dlqx did not exit 0"

# ---- several queues opened together from the queues view -------------------------------
# Space marks lr-orders.dlq and lr-payments.dlq, Enter opens both as one set: the list holds
# the dead letters of both, and an order's tree goes on into the payments queue.
# Then a queue that vanished after the listing: Enter on it says so on the message line,
# and the queues view stays.
api() { # method, path, [json]: the management API, the credentials on stdin (not in ps)
  printf 'user = "dlqx:%s"\n' "$(cat "$DLQX_PASSWORD_FILE")" |
    curl -q -s -K - -o /dev/null --max-time 10 -X "$1" -H 'content-type: application/json' \
      ${3:+--data-binary "$3"} "${DLQX_MGMT_URL}api/$2"
}
api PUT "queues/%2F/lr-vanish.dlq" '{"durable":true}'
T -f /dev/null new-session -d -s m -x 140 -y 40 \
  "cd '$tmp' && env DLQX_NOW=1767330000000 TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term \
   NO_COLOR=1 DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' \
   DLQX_MGMT_URL='$DLQX_MGMT_URL' '$dlqx' --read-only 2>'$tmp/ui3.err'; echo \$? >'$tmp/ui3.status'; sleep 600"
mcap() { T capture-pane -p -t m 2>/dev/null; }
mwait() { # text, tries of 0.1 s
  for _ in $(seq 1 "$2"); do mcap | grep -q -- "$1" && return 0; sleep 0.1; done
  return 1
}
mwait "lr-payments.dlq" 100 || bad "the queues view lists no lr-payments.dlq"
mcap >"$tmp/queues.screen"
row() { # the queue's index in the list (the rows start on the third line)
  awk -v q="$1" 'NR > 2 && $1 == q { print NR - 3; exit }' "$tmp/queues.screen"
}
r1=$(row lr-orders.dlq) r2=$(row lr-payments.dlq)
if [ -n "$r1" ] && [ -n "$r2" ]; then
  T send-keys -t m g
  for _ in $(seq 1 "$r1"); do T send-keys -t m j; done
  T send-keys -t m Space g
  for _ in $(seq 1 "$r2"); do T send-keys -t m j; done
  T send-keys -t m Space
  if mwait "2 marked" 50; then ok "Space marks two queues"; else bad "no two marked:"; mcap | tail -2; fi
  mcap >"$tmp/marked.screen"
  grep -q '^\* lr-orders\.dlq ' "$tmp/marked.screen" && grep -q '^\* lr-payments\.dlq ' "$tmp/marked.screen" &&
    ok "the mark column shows both" || bad "the mark column:"
  T send-keys -t m Enter
  if mwait " dlqx  messages  lr-orders.dlq, lr-payments.dlq" 300; then ok "Enter opens both"; else
    bad "Enter did not open both:"; mcap | head -3; fi
  mwait "lr-payments.dlq: complete" 300 >/dev/null
  mcap >"$tmp/both.screen"
  T send-keys -t m G
  sleep 0.3
  mcap >>"$tmp/both.screen"
  T send-keys -t m g
  both=$(($(rdepth lr-orders.dlq) + $(rdepth lr-payments.dlq)))
  grep -q ' lr-orders\.dlq *$' "$tmp/both.screen" && grep -q ' lr-payments\.dlq *$' "$tmp/both.screen" &&
    head -1 "$tmp/both.screen" | grep -q " $both messages *$" &&
    ok "the list holds the $both dead letters of both queues" ||
    { bad "the list is not of both queues ($both):"; head -3 "$tmp/both.screen"; }
  # An order that failed on its payment: its tree goes on into lr-payments.dlq.
  T send-keys -t m / "Payments::Declined" Enter
  mwait "Payments::Declined" 50 >/dev/null
  T send-keys -t m t
  mwait " dlqx  tree " 100 || bad "t: no tree view"
  sleep 0.5
  mcap >"$tmp/chain.screen"
  if awk '/\[lr-orders\.dlq\]/ { o = 1 } o && /(└─|├─).*\[lr-payments\.dlq\]/ { found = 1 } END { exit !found }' \
    "$tmp/chain.screen"; then
    ok "the tree is a chain from lr-orders.dlq into lr-payments.dlq"
  else
    bad "no chain across the two queues in the tree:"; head -12 "$tmp/chain.screen"
  fi
else
  bad "the queues view: no row of lr-orders.dlq ('$r1') or lr-payments.dlq ('$r2')"; head -20 "$tmp/queues.screen"
fi
T send-keys -t m q q
mwait "Space mark" 50 || bad "q q: not back on the queues view"
r3=$(row lr-vanish.dlq)
api DELETE "queues/%2F/lr-vanish.dlq"
if [ -n "$r3" ]; then
  T send-keys -t m g
  for _ in $(seq 1 "$r3"); do T send-keys -t m j; done
  T send-keys -t m Enter
  if mwait 'there is no queue "lr-vanish.dlq"' 100 && mcap | head -1 | grep -q " dlqx  queues "; then
    ok "Enter on a vanished queue: the message line says so, on the queues view"
  else
    bad "Enter on a vanished queue:"; mcap | sed -n '1p;$p'
  fi
else
  bad "lr-vanish.dlq was not listed"
fi
T send-keys -t m q
for _ in $(seq 1 100); do [ -s "$tmp/ui3.status" ] && break; sleep 0.1; done
[ "$(cat "$tmp/ui3.status" 2>/dev/null)" = 0 ] && ok "q: dlqx exited 0" || bad "dlqx did not exit 0 (queues view)"

# ---- a DLQ that fills, in the queues view -----------------------------------------------
# Messages expire (TTL 0) from lr-filling into lr-filling.dlq; the API has no publish rate for
# that, so the IN/S column shows the depth's growth: ~N above zero.
api PUT "queues/%2F/lr-filling.dlq" '{"durable":true}'
api PUT "queues/%2F/lr-filling" '{"durable":true,"arguments":{"x-message-ttl":0,"x-dead-letter-exchange":"","x-dead-letter-routing-key":"lr-filling.dlq"}}'
(while [ ! -f "$tmp/stop-filling" ]; do
  api POST "exchanges/%2F/amq.default/publish" \
    '{"routing_key":"lr-filling","payload":"{}","payload_encoding":"string","properties":{}}'
done) &
filler=$!
T -f /dev/null new-session -d -s f -x 140 -y 40 \
  "cd '$tmp' && env TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term NO_COLOR=1 \
   DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' DLQX_MGMT_URL='$DLQX_MGMT_URL' \
   '$dlqx' --read-only 2>'$tmp/ui4.err'; echo \$? >'$tmp/ui4.status'; sleep 600"
fcap() { T capture-pane -p -t f 2>/dev/null; }
for _ in $(seq 1 100); do fcap | grep -q "lr-filling\.dlq" && break; sleep 0.1; done
# The view refreshes itself (tests/screen/queues_live.sh holds that to account); r asks now.
# The API's counts lag its stats interval (5 s here): looked at for up to 30 s.
T send-keys -t f r
filling='^  lr-filling\.dlq +(▲ +)?classic +[0-9]+ +[0-9?]+ +[0-9?]+ +~[0-9]*\.?[0-9]*[1-9]'
for _ in $(seq 1 300); do fcap | grep -Eq "$filling" && break; sleep 0.1; done
fcap >"$tmp/filling.screen"
if grep -Eq "$filling" "$tmp/filling.screen"; then
  ok "a filling DLQ: IN/S is the depth's growth, ~N above zero"
else
  bad "a filling DLQ: IN/S is not a positive ~N:"; grep -E 'QUEUE|lr-filling' "$tmp/filling.screen"
fi
touch "$tmp/stop-filling"
wait "$filler"
T send-keys -t f q
for _ in $(seq 1 100); do [ -s "$tmp/ui4.status" ] && break; sleep 0.1; done
api DELETE "queues/%2F/lr-filling"
api DELETE "queues/%2F/lr-filling.dlq"

# ---- the pace of a pass from the explorer ------------------------------------------------
# The plan says the pace (by default 100 copies/s; the ramp 1,10,100 only for a pass larger
# than it); P sets it; a pass of 40 copies at 20/s then takes at least 39/20 s from its first
# outcome to its last, as the journal's own timestamps say (the outcomes: each copy's confirm,
# which follows its publish; the intents are written a window ahead of the publishes).
pn=40 prate=20
pq=pace-$$-bulk.dlq pj=$tmp/journal-pace.jsonl
if "$seed" --scenario bulk --prefix "pace-$$-" --count $pn --size 128 >"$tmp/seed-pace.out" 2>&1; then
  T -f /dev/null new-session -d -s pace -x 120 -y 40 \
    "cd '$tmp' && env TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term NO_COLOR=1 \
     DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' DLQX_JOURNAL='$pj' \
     '$dlqx' '$pq' 2>'$tmp/pace.err'; echo \$? >'$tmp/pace.status'; sleep 600"
  pcap() { T capture-pane -p -t pace 2>/dev/null; }
  pwait() { for _ in $(seq 1 "$2"); do pcap | grep -q -- "$1" && return 0; sleep 0.1; done; return 1; }
  pwait " dlqx  messages  $pq .* $pn messages" 300 || bad "pace: no messages view of $pq"
  T send-keys -t pace R a
  if pwait "pace: 100 copies/s (no ramp 1,10,100: the pass is not larger than it): at least 0.4 s" 100; then
    ok "the plan says its pace: $(pcap | grep -o 'pace: 100 copies/s.*at least 0.4 s')"
  else
    bad "the plan does not say its pace:"; pcap | head -8
  fi
  T send-keys -t pace P C-u "$prate" Enter
  pwait "pace: $prate copies/s: at least 2.0 s   P changes it" 50 && ok "P: the pace is $prate copies/s" ||
    { bad "P: the plan does not say $prate copies/s:"; pcap | grep 'pace\|: ' | head -3; }
  T send-keys -t pace y
  pwait "done $pn   kept 0   unknown 0" 300 && ok "y: $pn copies sent at $prate/s" ||
    { bad "y: no summary of $pn done"; pcap | head -6; }
  took=$(python3 - "$pj" <<'PY'
import json, sys
from datetime import datetime
at = [datetime.strptime(r["at"], "%Y-%m-%dT%H:%M:%S.%fZ")
      for r in map(json.loads, open(sys.argv[1])) if r.get("kind") == "outcome"]
print("%.3f %d" % ((max(at) - min(at)).total_seconds(), len(at)) if at else "0 0")
PY
)
  secs=${took% *}
  if [ "${took#* }" = "$pn" ] && awk -v t="$secs" -v m="$(( (pn - 1) * 1000 / prate ))" 'BEGIN { exit !(t * 1000 >= m - 10) }'; then
    ok "the pass took ${secs} s from the first outcome to the last: at least $((pn - 1))/$prate s"
  else
    bad "the pass took ${secs:-?} s for ${took#* } outcomes: less than $((pn - 1))/$prate s, or not $pn"
  fi
  T kill-session -t pace
else
  bad "pace: seeding failed"
fi

# ---- a signal during a bulk pass from the explorer ---------------------------------------
# `R a y` replays a few thousand dead letters; while it runs, Ctrl-C on the terminal (tmux
# send-keys C-c), SIGINT, SIGTERM or SIGHUP to the dlqx process, or the terminal hanging up
# (its tmux session killed). Each takes the graceful way: the pass stops sending, settles what
# is in flight and ends. Then the journal has the run's end and nothing pending, every message
# is in exactly one of the DLQ and the target (no duplicate, none lost), the summary is on
# standard error, the exit status is the replay's (20: some not sent), and the terminal is
# restored (out of the alternate screen, line editing and echo back on).
sn=${LIVE_SIGNAL_N:-3000}
stop_case() { # NAME: c-c | int | term | hup | hangup
  local name=$1 pre=st-$1-$$- q tq j st ppid pid tty
  q=${pre}bulk.dlq tq=${pre}bulk j=$tmp/journal-$name.jsonl
  if ! "$seed" --scenario bulk --prefix "$pre" --count "$sn" --size 128 >"$tmp/seed-$name.out" 2>&1; then
    bad "$name: seeding failed"; return
  fi
  "$dlqx" peek "$q" -o "$tmp/$name-before.jsonl" 2>/dev/null
  ids "$tmp/$name-before.jsonl" | sort >"$tmp/$name-before.ids"
  # The shell ignores SIGHUP so that it outlives a hang-up and writes dlqx's status.
  T -f /dev/null new-session -d -s "$name" -x 120 -y 40 \
    "trap '' HUP; cd '$tmp' && env DLQX_NOW=1767330000000 TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 \
     TERM=$tmux_term NO_COLOR=1 DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' \
     DLQX_JOURNAL='$j' '$dlqx' '$q' 2>'$tmp/$name.err'; echo \$? >'$tmp/$name.status'; \
     echo 'shell: after dlqx'; sleep 600"
  scap() { T capture-pane -p -t "$name" 2>/dev/null; }
  swait() { for _ in $(seq 1 "$2"); do scap | grep -q -- "$1" && return 0; sleep 0.1; done; return 1; }
  swait " dlqx  messages  $q .* $sn messages" 300 || { bad "$name: no messages view of $q"; scap | tail -3; return; }
  T send-keys -t "$name" R
  swait "replay this message of $q" 100 || { bad "$name: R: no plan"; return; }
  T send-keys -t "$name" a
  swait "replay the $sn shown of $q: $sn to send" 300 || { bad "$name: a: no plan of $sn"; scap | head -3; return; }
  T send-keys -t "$name" y
  # Sending: some done, not all.
  if ! swait "done [1-9][0-9]* " 300; then bad "$name: y: the pass did not start"; scap | head -12; return; fi
  scap >"$tmp/$name-sending.screen"
  ppid=$(T display -p -t "$name" '#{pane_pid}')
  tty=$(T display -p -t "$name" '#{pane_tty}')
  pid=$(ps -o pid= --ppid "$ppid" | head -n 1 | tr -d ' ') # dlqx, the shell's one child
  case $name in
  c-c) T send-keys -t "$name" C-c ;;
  int) kill -INT "$pid" ;;
  term) kill -TERM "$pid" ;;
  hup) kill -HUP "$pid" ;;
  hangup) T kill-session -t "$name" ;;
  esac
  for _ in $(seq 1 600); do [ -s "$tmp/$name.status" ] && break; sleep 0.1; done
  st=$(cat "$tmp/$name.status" 2>/dev/null)
  [ "$st" = 20 ] && ok "$name: dlqx stopped the pass and exited 20 (some not sent)" ||
    bad "$name: dlqx exited ${st:-?}, not 20: $(tail -n 3 "$tmp/$name.err" | tr '\n' ' ')"
  grep -q "^dlqx replay: stopped by .*: cancelled: " "$tmp/$name.err" &&
    ok "$name: the summary on stderr: $(grep -m1 'stopped by' "$tmp/$name.err" | cut -c1-90)" ||
    bad "$name: no summary on stderr: $(head -c 300 "$tmp/$name.err")"
  grep -q '"kind":"end"' "$j" 2>/dev/null && ok "$name: the journal has the run's end" ||
    bad "$name: no end record in the journal"
  local pend prc
  pend=$("$dlqx" journal --pending --file "$j" 2>"$tmp/$name-pending.err"); prc=$?
  [ $prc -eq 0 ] && [ -z "$pend" ] && ok "$name: dlqx journal --pending: nothing pending" ||
    bad "$name: journal --pending exited $prc: $(echo "$pend" | head -3)"
  "$dlqx" peek "$q" -o "$tmp/$name-dlq.jsonl" 2>/dev/null
  "$dlqx" peek "$tq" -o "$tmp/$name-target.jsonl" 2>/dev/null
  ids "$tmp/$name-dlq.jsonl" | sort >"$tmp/$name-dlq.ids"
  ids "$tmp/$name-target.jsonl" | sort >"$tmp/$name-target.ids"
  local nd nt both
  nd=$(wc -l <"$tmp/$name-dlq.ids") nt=$(wc -l <"$tmp/$name-target.ids")
  both=$(comm -12 "$tmp/$name-dlq.ids" "$tmp/$name-target.ids" | wc -l)
  if [ "$both" -eq 0 ] && [ "$nt" -gt 0 ] && [ "$nd" -gt 0 ] &&
    sort -m "$tmp/$name-dlq.ids" "$tmp/$name-target.ids" | cmp -s - "$tmp/$name-before.ids"; then
    ok "$name: each of the $sn messages in exactly one place ($nt in $tq, $nd in $q)"
  else
    bad "$name: $both messages in both queues; $nt in $tq, $nd in $q of $sn"
  fi
  if [ "$name" = hangup ]; then
    return # no terminal left to look at
  fi
  swait "shell: after dlqx" 50 || bad "$name: the shell's line never showed"
  if [ "$(T display -p -t "$name" '#{alternate_on}')" = 0 ] && stty -F "$tty" -a | grep -q ' icanon ' &&
    stty -F "$tty" -a | grep -q ' echo '; then
    ok "$name: the terminal is restored (normal screen, icanon, echo)"
  else
    bad "$name: the terminal is not restored: alternate_on $(T display -p -t "$name" '#{alternate_on}'), $(stty -F "$tty" -a | grep -o ' -\?icanon \| -\?echo ' | tr -d '\n')"
  fi
  T kill-session -t "$name" 2>/dev/null
}
for how in ${LIVE_SIGNALS:-c-c int term hup hangup}; do stop_case "$how"; done

# ---- an interrupted run's intents stop the explorer's next pass (issue 16.5) ----------------
# A CLI replay SIGKILLed mid-pass leaves pending intents for its DLQ. The explorer's y then
# sends nothing and says so (the count, dlqx journal --reconcile); a second y goes on.
pp=pend-$$- pdlq=pend-$$-bulk.dlq pjn=$tmp/journal-pend.jsonl
if "$seed" --scenario bulk --prefix "$pp" --count 2000 --size 128 >"$tmp/seed-pend.out" 2>&1; then
  # Killed as soon as the first intents are in the journal: copies are in flight then.
  for try in 1 2 3 4; do
    DLQX_JOURNAL=$pjn "$dlqx" replay "$pdlq" --all --yes --window 1000 >/dev/null 2>&1 &
    kp=$!
    for _ in $(seq 1 500); do grep -q '"kind":"intent"' "$pjn" 2>/dev/null && break; sleep 0.01; done
    kill -9 $kp 2>/dev/null
    wait $kp 2>/dev/null
    "$dlqx" journal --pending --json --file "$pjn" 2>/dev/null | grep -q "\"run_source\":\"$pdlq\"" && break
    [ $try -lt 4 ] || bad "pending: no kill left a pending intent in $try tries"
  done
  pd=$(rdepth "$pdlq")
  T -f /dev/null new-session -d -s pend -x 120 -y 40 \
    "cd '$tmp' && env TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term NO_COLOR=1 \
     DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' DLQX_JOURNAL='$pjn' \
     '$dlqx' '$pdlq' 2>'$tmp/pend.err'; echo \$? >'$tmp/pend.status'; sleep 600"
  ecap() { T capture-pane -p -t pend 2>/dev/null; }
  ewait() { for _ in $(seq 1 "$2"); do ecap | grep -q -- "$1" && return 0; sleep 0.1; done; return 1; }
  # The list shows as the snapshot is read; a pass waits for its end (dlqx holds the messages).
  if ewait " dlqx  messages  $pdlq " 300 && ewait "complete: $pd of $pd messages" 300; then
    T send-keys -t pend R
    ewait "replay this message of $pdlq" 100 || bad "pending: R: no plan"
    T send-keys -t pend y
    if ewait "nothing sent: [0-9]* intents\? of an interrupted run pending here (dlqx journal --reconcile); y sends anyway" 100; then
      ok "pending: y names the interrupted run's intents: $(ecap | grep -o 'nothing sent: [0-9]* intents\? of an interrupted run')"
    else
      bad "pending: y did not name the pending intents:"; ecap | tail -3
    fi
    [ "$(rdepth "$pdlq")" = "$pd" ] && ok "pending: nothing was sent ($pd in $pdlq)" ||
      bad "pending: $pdlq holds $(rdepth "$pdlq"), not $pd"
    T send-keys -t pend y
    if ewait "1 done" 150; then ok "pending: a second y sends"; else bad "pending: the second y:"; ecap | tail -3; fi
    T send-keys -t pend q q q
  else
    bad "pending: no messages view of $pdlq"; ecap | tail -3
  fi
  T kill-session -t pend 2>/dev/null
else
  bad "pending: seeding failed"
fi

echo "live: $pass passed, $fail failed"
[ $fail -eq 0 ]
