# Sourced by the screen scripts that drive the explorer against a broker (queues_live.sh,
# queues_side.sh, live.sh, live_follow.sh, plan_failover.sh): the pass/fail counts, a poll, the broker (a private node, or the one of
# DLQX_TEST_BROKER_DIR) and the TCP proxy (tcp_proxy.py) in front of one of its ports.
#
# usage: here=...; root=...; tmp=...; . "$here/lib.sh"
#        screen_broker NAME     sets dir (and own=1 for a node of its own), sources its env
#        screen_broker_stop     in the EXIT trap: stops the node if it is the script's own
#        screen_proxy NAME UPSTREAM_PORT ARGS...   starts tcp_proxy.py (pid in proxy; its port
#                               in proxy_port); the caller's environment reaches it
#        screen_url_via PORT    DLQX_URL with PORT instead of the node's AMQP port
pass=0
fail=0
own=0
proxy=
dir=${DLQX_TEST_BROKER_DIR:-}
ok() { pass=$((pass + 1)); echo "ok    $*"; }
bad() { fail=$((fail + 1)); echo "FAIL  $*"; }
waitfor() { # seconds, a shell condition; polled every 0.1 s
  local end=$((SECONDS + $1))
  while [ $SECONDS -lt $end ]; do eval "$2" && return 0; sleep 0.1; done
  return 1
}

screen_broker() {
  if [ -z "$dir" ]; then
    dir=$("$root/scripts/broker" start 2>"$tmp/broker.log" | tail -n 1)
    if [ -z "$dir" ] || [ ! -f "$dir/env" ]; then
      echo "$1: the test broker did not start:"; cat "$tmp/broker.log"; exit 1
    fi
    own=1
  fi
  . "$dir/env"
  export DLQX_URL DLQX_PASSWORD_FILE DLQX_MGMT_URL
}

screen_broker_stop() {
  [ "$own" -eq 1 ] && "$root/scripts/broker" stop "$dir" --fast >/dev/null 2>&1
  own=0
}

screen_proxy() {
  local name=$1
  shift
  python3 "$here/tcp_proxy.py" "$1" "$tmp/proxy.port" "${@:2}" &
  proxy=$!
  for _ in $(seq 1 50); do [ -s "$tmp/proxy.port" ] && break; sleep 0.1; done
  [ -s "$tmp/proxy.port" ] || { echo "$name: the proxy did not start"; exit 1; }
  proxy_port=$(cat "$tmp/proxy.port")
}

screen_url_via() {
  local u
  u=$(printf '%s' "$DLQX_URL" | sed "s/:$DLQX_AMQP_PORT\\//:$1\\//")
  [ "$u" != "$DLQX_URL" ] || { echo "cannot make a URL with port $1 of $DLQX_URL" >&2; return 1; }
  printf '%s' "$u"
}
