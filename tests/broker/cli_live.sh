#!/bin/sh
# The broker commands' failures, as a script sees them: one clear sentence on stderr, its own
# exit code, and never a password. Needs the test broker's environment (run.sh).
set -u
dlqx=$1
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
password=$(cat "$DLQX_PASSWORD_FILE")

check() { # name, expected exit code, expected text in stderr, command...
  name=$1 want=$2 text=$3
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  ok=1
  [ "$rc" -eq "$want" ] || { echo "FAIL $name: exit $rc, expected $want"; ok=0; }
  grep -q -- "$text" "$tmp/err" || { echo "FAIL $name: stderr lacks \"$text\":"; cat "$tmp/err"; ok=0; }
  if grep -q -F -- "$password" "$tmp/out" "$tmp/err"; then
    echo "FAIL $name: the password was printed"
    ok=0
  fi
  if [ $ok -eq 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

printf 'wrong-password\n' >"$tmp/bad"
chmod 600 "$tmp/bad"
check missing-queue 15 'there is no queue "cli.no.such"' "$dlqx" peek cli.no.such
check bad-credentials 11 'refused the login of user "dlqx"' \
  "$dlqx" peek x --password-file "$tmp/bad"
check unreachable 10 'cannot reach amqp://dlqx@127.0.0.1:1/' \
  "$dlqx" peek x --url amqp://dlqx@127.0.0.1:1/
check vhost-missing 12 'virtual host "no-such-vhost" does not exist' \
  "$dlqx" peek x --url "amqp://dlqx@127.0.0.1:$DLQX_AMQP_PORT/no-such-vhost"
check bad-url 2 'is not an amqp:// or amqps:// URL' "$dlqx" peek x --url http://nope/
check password-on-command-line 2 'no --password' "$dlqx" peek x --password hunter2
chmod 644 "$tmp/bad"
check world-readable-password 2 'can be read by anyone' "$dlqx" peek x --password-file "$tmp/bad"
# A password in the URL works but is never shown.
check url-password-masked 15 'amqp://dlqx@127.0.0.1' env DLQX_PASSWORD_FILE= \
  "$dlqx" peek cli.no.such --url "amqp://dlqx:$password@127.0.0.1:$DLQX_AMQP_PORT/%2F"
# Failover: a dead node first.
check failover 15 'there is no queue' "$dlqx" peek cli.no.such \
  --url amqp://dlqx@127.0.0.1:1/ --url "$DLQX_URL"
echo "cli_live: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
