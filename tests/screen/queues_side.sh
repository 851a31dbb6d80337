#!/usr/bin/env bash
# The explorer reads the queues it opens together side by side, not one after another
# (issue 15): `dlqx HELD OTHER` with dlqx's AMQP going through a TCP proxy
# (tests/screen/tcp_proxy.py) that holds the one connection that named HELD once the broker
# has sent it some deliveries, as a broker pausing one queue does. While HELD is held, every
# message of OTHER must arrive (a filter on OTHER's name shows all of them) and HELD's peek
# must still be under way (the status line's progress, short of the total) and a key is still
# answered at once; when the hold ends
# both complete, every message given back (the depths as before). A reader that takes the
# queues in turn never starts OTHER while HELD is held and fails here; so does one that reads
# them in turn in the other order, as the two orders are both run.
#
# A private RabbitMQ node is started for it (scripts/broker) and stopped afterwards;
# DLQX_TEST_BROKER_DIR uses a node already running instead. Without RabbitMQ, tmux or python3
# it fails (a test that did not run never counts as passed).
#
# usage: tests/screen/queues_side.sh DLQX DLQX_SEED SOURCE_ROOT
# environment: QSIDE_KEEP=1 keeps the scratch directory (the screens captured)
set -u
dlqx=$1
seed=$2
root=$3
here=$(cd "$(dirname "$0")" && pwd)
for t in tmux python3 curl; do
  command -v $t >/dev/null || { echo "queues-side: FAIL: $t is not installed"; exit 1; }
done
tmp=$(mktemp -d)
sock=dlqx-qside-$$
. "$here/lib.sh"
. "$here/reap.sh"
screen_tag_init
P=qs$$
big=${P}a-bulk.dlq small=${P}b-bulk.dlq
nbig=3000 nsmall=200
cleanup() {
  [ -n "$proxy" ] && kill "$proxy" 2>/dev/null && wait "$proxy" 2>/dev/null
  tmux -L "$sock" kill-server 2>/dev/null
  screen_reap queues-side
  if [ -n "${DLQX_MGMT_URL:-}" ]; then
    for q in ${P}a-bulk ${P}b-bulk "$big" "$small"; do api DELETE "queues/%2F/$q"; done
    for x in ${P}a-acemq.dlx ${P}b-acemq.dlx; do api DELETE "exchanges/%2F/$x"; done
  fi
  screen_broker_stop
  if [ "${QSIDE_KEEP:-}" = 1 ]; then echo "queues-side: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
api() { mgmt "$@" >/dev/null; }

screen_broker queues-side
password=$(cat "$DLQX_PASSWORD_FILE")
. "$root/tests/broker/check.sh"
pass=0 fail=0 # check.sh's own counts are not used here
"$seed" --scenario bulk --prefix "${P}a-" --count $nbig --size 256 >"$tmp/seed.out" 2>&1 &&
  "$seed" --scenario bulk --prefix "${P}b-" --count $nsmall --size 256 >>"$tmp/seed.out" 2>&1 ||
  { echo "queues-side: seeding failed:"; tail -5 "$tmp/seed.out"; exit 1; }

# ~64 KB of deliveries (a hundred or so of the big queue's 3000) before its connection is held.
HOLD_FILE=$tmp/hold HOLD_AFTER=65536 HOLD_NAME=$big screen_proxy queues-side "$DLQX_AMQP_PORT" "$tmp/never"
purl=$(screen_url_via "$proxy_port") || exit 1

T() { tmux -L "$sock" "$@"; }
cap() { T capture-pane -p -t q 2>/dev/null; }
# The title's count: "N messages", or "N of M" under a filter.
title() { cap | head -1 | grep -oE '[0-9]+ (of [0-9]+|messages)$'; }

for order in "$big $small" "$small $big"; do
  touch "$tmp/hold"
  rm -f "$tmp/ui.status"
  # --heartbeat 60: the held connection is not given up as lost for two minutes.
  T -f /dev/null new-session -d -s q -x 150 -y 30 \
    "cd '$tmp' && env TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 NO_COLOR=1 DLQX_URL='$purl' \
     DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' DLQX_MGMT_URL='$DLQX_MGMT_URL' \
     '$dlqx' --read-only --heartbeat 60 $order 2>'$tmp/ui.err'; echo \$? >'$tmp/ui.status'; sleep 600"
  T set-option -t q status off >/dev/null
  waitfor 15 'cap | head -1 | grep -q " dlqx  messages"' || { bad "[$order] no messages view:"; cap | head -3; }
  T send-keys -t q f
  T send-keys -t q -l "queue=$small"
  T send-keys -t q Enter
  if waitfor 30 '[ "$(title | cut -d" " -f1,2)" = "$nsmall of" ]'; then
    ok "[$order] all $nsmall of $small arrived while $big is held"
  else
    bad "[$order] $small is not all in while $big is held: the title says '$(title)'"
    cap | sed -n '1p;$p'
  fi
  cap >"$tmp/held.screen"
  shown=$(title | awk '{print $3}')
  if [ -n "$shown" ] && [ "$shown" -lt $((nbig + nsmall)) ] && [ "$shown" -gt $nsmall ] &&
    tail -1 "$tmp/held.screen" | grep -qE "peek 2 queues [0-9]+/$((nbig + nsmall))"; then
    ok "[$order] and $big was still being read, held at $((shown - nsmall)) of $nbig"
  else
    bad "[$order] $big was not held part-way (the hold did not work): $shown rows; $(tail -1 "$tmp/held.screen")"
  fi
  # A key while one queue is held: answered at once (a reader blocked on the held connection
  # would hold every key too).
  t0=$(date +%s%N)
  T send-keys -t q '?'
  if waitfor 3 'cap | head -1 | grep -q " dlqx  help"'; then
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ $ms -lt 1000 ] && ok "[$order] ? answered in $ms ms while $big is held" ||
      bad "[$order] ? took $ms ms while $big is held"
  else
    bad "[$order] ? not answered in 3 s while $big is held:"; cap | head -2
  fi
  T send-keys -t q Escape
  waitfor 3 'cap | head -1 | grep -q " dlqx  messages"' || bad "[$order] Escape: not back on the messages"
  rm -f "$tmp/hold"
  if waitfor 60 'cap | tail -1 | grep -q "complete: .*complete: "'; then
    line=$(cap | tail -1)
    case "$line" in
    *"$big: complete: $nbig of $nbig messages"*"$small: complete: $nsmall of $nsmall messages"* | \
      *"$small: complete: $nsmall of $nsmall messages"*"$big: complete: $nbig of $nbig messages"*)
      ok "[$order] the hold over: both complete ($line)" ;;
    *) bad "[$order] not both complete: $line" ;;
    esac
  else
    bad "[$order] not both complete 60 s after the hold:"; cap | tail -1
  fi
  T send-keys -t q q
  waitfor 10 '[ -s "$tmp/ui.status" ]'
  [ "$(cat "$tmp/ui.status" 2>/dev/null)" = 0 ] && ok "[$order] q: dlqx exited 0" ||
    { bad "[$order] dlqx did not exit 0"; cat "$tmp/ui.err"; }
  T kill-server 2>/dev/null
  sleep 1
  d1=$(depth "$big") d2=$(depth "$small")
  [ "$d1" = $nbig ] && [ "$d2" = $nsmall ] && ok "[$order] the depths are as before ($d1, $d2)" ||
    bad "[$order] the depths are $d1 and $d2, not $nbig and $nsmall"
done
echo "queues-side: $pass passed, $fail failed"
[ $fail -eq 0 ]
