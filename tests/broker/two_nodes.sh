#!/bin/sh
# Runs a test against two separate RabbitMQ nodes (not a cluster: conn_reopen's own test, which
# kills and pauses them): starts both in parallel with scripts/broker, exports
# DLQX_NODE<I>_URL, _PASSWORD_FILE, _DIR (I = 1, 2) and DLQX_BROKER_SCRIPT, runs the test (under
# $DLQX_WRAPPER when set, e.g. valgrind) and stops both nodes whatever happens.
# usage: two_nodes.sh SOURCE_ROOT TEST_EXECUTABLE
set -u
root=$1
exe=$2
broker=$root/scripts/broker
log=${TMPDIR:-/tmp}/dlqx-test-two-nodes.$$
d1='' d2=''
cleanup() {
  for d in "$d1" "$d2"; do
    [ -n "$d" ] && "$broker" stop "$d" --fast >/dev/null 2>&1
  done
  rm -f "$log.1" "$log.2" "$log.e1" "$log.e2"
}
trap cleanup EXIT INT TERM
"$broker" start >"$log.1" 2>"$log.e1" &
p1=$!
"$broker" start >"$log.2" 2>"$log.e2" &
p2=$!
wait $p1
wait $p2
d1=$(tail -n 1 "$log.1")
d2=$(tail -n 1 "$log.2")
for i in 1 2; do
  eval "d=\$d$i"
  if [ -z "$d" ] || [ ! -f "$d/env" ]; then
    echo "node $i did not start:" >&2
    cat "$log.e$i" >&2
    exit 1
  fi
  url=$(. "$d/env" && echo "$DLQX_URL")
  pwf=$(. "$d/env" && echo "$DLQX_PASSWORD_FILE")
  export "DLQX_NODE${i}_URL=$url" "DLQX_NODE${i}_PASSWORD_FILE=$pwf" "DLQX_NODE${i}_DIR=$d"
done
export DLQX_BROKER_SCRIPT="$broker"
${DLQX_WRAPPER:-} "$exe"
