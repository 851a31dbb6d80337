#!/usr/bin/env bash
# The queues view refreshing itself against a live broker, as a person sees it: no key is
# pressed while a producer makes a DLQ fill (messages expire into it), and the row's depth goes
# up, the ▲ growing mark appears and IN/S shows a rate; then the management API hangs (a proxy
# in front of it stops answering, tests/screen/tcp_proxy.py): the last depth stays on screen,
# the bottom line says STALE with its age, and a key (?) is still answered at once; when the
# API answers again the view is current again. --refresh 2 keeps it short (the default is 5 s).
#
# A private RabbitMQ node is started for it (scripts/broker) and stopped afterwards;
# DLQX_TEST_BROKER_DIR uses a node already running instead. Without RabbitMQ, tmux or python3
# it fails (a test that did not run never counts as passed).
#
# Still to come (#13): the same view on a 3-node cluster with one node down (a classic DLQ on
# the dead node UNAVAILABLE with its node and depth ?, a quorum DLQ BELOW QUORUM), once
# `scripts/broker cluster` (branch h-cluster) is merged; the logic is unit-tested on a
# hand-made listing in tests/test_qhealth.c meanwhile.
#
# usage: tests/screen/queues_live.sh DLQX SOURCE_ROOT
# environment: QLIVE_KEEP=1 keeps the scratch directory (the screens captured)
set -u
dlqx=$1
root=$2
here=$(cd "$(dirname "$0")" && pwd)
for t in tmux python3 curl; do
  command -v $t >/dev/null || { echo "queues-live: FAIL: $t is not installed"; exit 1; }
done
tmp=$(mktemp -d)
sock=dlqx-qlive-$$
filler=
. "$here/lib.sh"
. "$here/reap.sh"
screen_tag_init
cleanup() {
  [ -n "$filler" ] && { touch "$tmp/stop"; wait "$filler" 2>/dev/null; }
  [ -n "$proxy" ] && kill "$proxy" 2>/dev/null && wait "$proxy" 2>/dev/null
  tmux -L "$sock" kill-server 2>/dev/null
  screen_reap queues-live
  [ -n "${DLQX_MGMT_URL:-}" ] && { api DELETE "queues/%2F/sq-filling"; api DELETE "queues/%2F/sq-filling.dlq"; }
  screen_broker_stop
  if [ "${QLIVE_KEEP:-}" = 1 ]; then echo "queues-live: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# The management API itself (not the proxy): check.sh's mgmt (credentials on stdin), its
# status not wanted.
api() { mgmt "$@" >/dev/null; }

screen_broker queues-live
password=$(cat "$DLQX_PASSWORD_FILE")
. "$root/tests/broker/check.sh"
pass=0 fail=0 # check.sh's own counts are not used here

api PUT "queues/%2F/sq-filling.dlq" '{"durable":true}'
api PUT "queues/%2F/sq-filling" '{"durable":true,"arguments":{"x-message-ttl":0,"x-dead-letter-exchange":"","x-dead-letter-routing-key":"sq-filling.dlq"}}'
api DELETE "queues/%2F/sq-filling.dlq/contents"

screen_proxy queues-live "$DLQX_MGMT_PORT" "$tmp/hang"
murl="http://127.0.0.1:$proxy_port/"

T() { tmux -L "$sock" "$@"; }
tmux_term=tmux-256color
infocmp $tmux_term >/dev/null 2>&1 || tmux_term=screen-256color
T -f /dev/null new-session -d -s q -x 160 -y 30 \
  "cd '$tmp' && env TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term NO_COLOR=1 \
   DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' DLQX_MGMT_URL='$murl' \
   '$dlqx' --read-only --refresh 2 2>'$tmp/ui.err'; echo \$? >'$tmp/ui.status'; sleep 600"
cap() { T capture-pane -p -t q 2>/dev/null; }
# The row of sq-filling.dlq: "READY MARK" (MARK is ▲ or -), or nothing.
row() {
  cap | awk '$1 == "sq-filling.dlq" || ($1 == "*" && $2 == "sq-filling.dlq") {
    m = "-"; for (i = 1; i <= NF; i++) if ($i == "▲") m = "▲"
    for (i = 1; i <= NF; i++) if ($i == "classic") { print $(i + 1), m; exit } }'
}

# ---- listed, empty, not growing ----------------------------------------------------------
if waitfor 15 '[ -n "$(row)" ]'; then ok "the queues view lists sq-filling.dlq"; else
  bad "sq-filling.dlq is not listed:"; cap; exit 1; fi
# A queue younger than the API's stats interval is listed without counts: 0 or ?.
first=$(row)
case $first in
"0 -" | "? -") ok "at first: depth ${first% *}, no growing mark" ;;
*) bad "at first: '$first', not '0 -' or '? -'" ;;
esac

# ---- a producer fills it; no key is pressed ----------------------------------------------
(while [ ! -f "$tmp/stop" ]; do
  api POST "exchanges/%2F/amq.default/publish" \
    '{"routing_key":"sq-filling","payload":"{}","payload_encoding":"string","properties":{}}'
  sleep 0.02
done) &
filler=$!
d1=0
if waitfor 30 'r=$(row); [ "${r#* }" = "▲" ] && [ "${r% *}" -gt 0 ]'; then
  d1=$(row); d1=${d1% *}
  ok "by itself: the depth went up to $d1 and the ▲ mark is on the row"
else
  bad "no self-refresh: the row is '$(row)' after 30 s:"; cap | sed -n '1,6p;$p'
fi
cap >"$tmp/growing.screen"
if waitfor 20 'r=$(row); [ "${r% *}" -gt "${d1:-0}" ]'; then
  ok "and again: the depth moved on from $d1 to $(row | cut -d" " -f1)"
else
  bad "the depth stayed at $d1"
fi
grep -E '^ +sq-filling\.dlq +▲ +classic +[0-9]+ +[0-9?]+ +[0-9?]+ +~?[0-9]*\.?[0-9]*[1-9]' \
  "$tmp/growing.screen" >/dev/null && ok "IN/S shows a rate above zero" ||
  { bad "IN/S is not above zero:"; grep -E 'QUEUE|sq-filling' "$tmp/growing.screen"; }
touch "$tmp/stop"
wait "$filler"
filler=

# ---- the management API hangs ------------------------------------------------------------
before=$(row)
before=${before% *}
touch "$tmp/hang"
if waitfor 30 'cap | grep -q "STALE: as of"'; then
  ok "a hung management API: the bottom line says STALE with its age"
else
  bad "no STALE on the bottom line after 30 s:"; cap | tail -3
fi
cap >"$tmp/stale.screen"
now=$(row)
[ "${now% *}" = "$before" ] && ok "the last depth ($before) stays on screen, not 0" ||
  bad "the depth shown went from $before to '${now% *}'"
# A key while the API hangs: answered at once.
t0=$(date +%s%N)
T send-keys -t q '?'
if waitfor 3 'cap | head -1 | grep -q " dlqx  help"'; then
  ms=$((($(date +%s%N) - t0) / 1000000))
  [ $ms -lt 1000 ] && ok "? answered in $ms ms while the API hangs" || bad "? took $ms ms"
else
  bad "? not answered in 3 s while the API hangs:"; cap | head -2
fi
T send-keys -t q Escape
waitfor 3 'cap | head -1 | grep -q " dlqx  queues"' || bad "Escape: not back on the queues view"
rm -f "$tmp/hang"
if waitfor 40 'cap | tail -2 | grep -q "as of .* ago, every 2 s" && ! cap | grep -q STALE'; then
  ok "the API answers again: the view is current again"
else
  bad "still stale 40 s after the API answers again:"; cap | tail -3
fi

T send-keys -t q q
waitfor 10 '[ -s "$tmp/ui.status" ]'
[ "$(cat "$tmp/ui.status" 2>/dev/null)" = 0 ] && ok "q: dlqx exited 0" ||
  { bad "dlqx did not exit 0"; cat "$tmp/ui.err"; }
echo "queues-live: $pass passed, $fail failed"
[ $fail -eq 0 ]
