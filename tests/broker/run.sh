#!/bin/sh
# Runs the live-broker suites: starts a private RabbitMQ node (scripts/broker start --tls, so
# that its amqps listeners serve the TLS suite too), points the suites at it through the
# environment, and stops it afterwards whatever happens.
# usage: run.sh SOURCE_ROOT TEST_EXECUTABLE... [-- SCRIPT ARGS...]...
#        (each "-- SCRIPT ARGS..." group is one more suite, run in order)
# DLQX_TEST_BROKER_DIR: use an already running node (scripts/broker start --tls) instead.
set -u
root=$1
shift
own=0
if [ -n "${DLQX_TEST_BROKER_DIR:-}" ]; then
  dir=$DLQX_TEST_BROKER_DIR
else
  dir=$("$root/scripts/broker" start --tls 2>"${TMPDIR:-/tmp}/dlqx-test-broker.log" | tail -n 1)
  if [ -z "$dir" ] || [ ! -f "$dir/env" ]; then
    echo "the test broker did not start:" >&2
    cat "${TMPDIR:-/tmp}/dlqx-test-broker.log" >&2
    exit 1
  fi
  own=1
fi
trap '[ $own -eq 1 ] && "$root/scripts/broker" stop "$dir" >/dev/null 2>&1' EXIT INT TERM
. "$dir/env"
export DLQX_URL DLQX_PASSWORD_FILE DLQX_MGMT_URL DLQX_AMQP_PORT DLQX_MGMT_PORT DLQX_BROKER_DIR
export DLQX_BROKER_DIR="$dir" DLQX_SOURCE_ROOT="$root"
export DLQX_BIN="${DLQX_BIN:-$root/build/dlqx}"
run_first() { # N WORD...: runs the first N words as one command
  _n=$1
  shift
  _i=0
  for _a in "$@"; do
    [ $_i -eq 0 ] && set --
    [ $_i -lt "$_n" ] && set -- "$@" "$_a"
    _i=$((_i + 1))
  done
  "$@"
}
status=0
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then
    shift
    n=0
    for a in "$@"; do
      [ "$a" = "--" ] && break
      n=$((n + 1))
    done
    run_first "$n" "$@" || status=1
    shift "$n"
    continue
  fi
  ${DLQX_WRAPPER:-} "$1" || status=1
  shift
done
exit $status
