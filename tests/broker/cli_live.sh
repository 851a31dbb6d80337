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
# A seeded incident: the DLQs are found with their sources, a peek of each keeps its depth,
# and every message decodes.
seed=${DLQX_SEED:-}
if [ -z "$seed" ] || [ ! -x "$seed" ]; then
  echo "FAIL seed: DLQX_SEED is not the dlqx-seed program"
  fail=$((fail + 1))
else
  if "$seed" --prefix cli. >"$tmp/seed.out" 2>&1; then pass=$((pass + 1)); else
    echo "FAIL seed:"; tail -5 "$tmp/seed.out"; fail=$((fail + 1)); fi
  "$dlqx" queues --json >"$tmp/queues" 2>"$tmp/queues.err"
  for q in cli.orders.dlq:cli.orders cli.payments.dlq:cli.payments cli.billing.dlq:cli.billing \
           cli.audit.dead:cli.audit cli.jobs.dlq:cli.jobs; do
    name=${q%%:*} src=${q##*:}
    if grep -q "\"name\":\"$name\",.*\"role\":\"dlq\".*\"sources\":\[\"$src\"" "$tmp/queues"; then
      pass=$((pass + 1))
    else
      echo "FAIL queues: $name is not listed as a DLQ of $src"; fail=$((fail + 1))
    fi
  done
  check queues-mode 0 'management API at' "$dlqx" queues
  check queues-no-mgmt 0 'no management API' "$dlqx" queues --no-mgmt cli.orders.dlq
  for name in cli.orders.dlq cli.payments.dlq cli.billing.dlq cli.emails.dlq cli.events.dlq; do
    before=$("$dlqx" queues --no-mgmt --json "$name" 2>/dev/null | sed 's/.*"ready":\([0-9]*\).*/\1/')
    if "$dlqx" peek "$name" -o "$tmp/$name.jsonl" 2>"$tmp/peek.err"; then
      n=$(wc -l <"$tmp/$name.jsonl")
      decoded=$("$dlqx" decode "$tmp/$name.jsonl" | wc -l)
      after=$("$dlqx" queues --no-mgmt --json "$name" 2>/dev/null | sed 's/.*"ready":\([0-9]*\).*/\1/')
      if [ "$n" -eq "$before" ] && [ "$decoded" -eq "$n" ] && [ "$after" -eq "$before" ]; then
        pass=$((pass + 1))
      else
        echo "FAIL peek $name: $n records, $decoded decoded, depth $before -> $after"
        cat "$tmp/peek.err"
        fail=$((fail + 1))
      fi
    else
      echo "FAIL peek $name:"; cat "$tmp/peek.err"; fail=$((fail + 1))
    fi
  done
  # The causal chains span queues: joined, the snapshots make trees with more than one level.
  cat "$tmp"/cli.orders.dlq.jsonl "$tmp"/cli.payments.dlq.jsonl >"$tmp/both.jsonl"
  if "$dlqx" tree --ascii "$tmp/both.jsonl" | grep -q '^|  `- \|^   `- \|^|  |- '; then
    pass=$((pass + 1))
  else
    echo "FAIL tree: no chain across orders.dlq and payments.dlq"; fail=$((fail + 1))
  fi
fi
echo "cli_live: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
