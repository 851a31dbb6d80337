#!/bin/sh
# The broker commands' failures, as a script sees them: one clear sentence on stderr, its own
# exit code, and never a password. Needs the test broker's environment (run.sh).
set -u
dlqx=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
password=$(cat "$DLQX_PASSWORD_FILE")

. "$(dirname "$0")/check.sh"
ctl() { "$DLQX_SOURCE_ROOT/scripts/broker" ctl "$DLQX_BROKER_DIR" "$@" >>"$tmp/ctl.log" 2>&1; }

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
  # peek -o: the files it writes (src/base/safefile.c). A new snapshot is 0600 (bodies hold
  # tokens); a replaced one keeps its mode; a FIFO stays a FIFO and gets the records; a
  # symbolic link — at FILE or planted at FILE.partial — is never written through; an
  # incomplete peek (16 here: a delivery limit of 1 puts the first message within reach)
  # leaves the good older snapshot alone and keeps what it read as FILE.partial.
  q=cli.orders.dlq
  depth=$(wc -l <"$tmp/$q.jsonl")
  fileok() { # name, condition (a shell test), what failed
    if eval "$2"; then pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
  }
  (umask 022; "$dlqx" peek "$q" -o "$tmp/new.jsonl" 2>/dev/null)
  fileok peek-o-mode-new '[ "$(stat -c %a "$tmp/new.jsonl")" = 600 ]' \
    "a new snapshot is mode $(stat -c %a "$tmp/new.jsonl"), not 600"
  chmod 640 "$tmp/new.jsonl"
  (umask 022; "$dlqx" peek "$q" -o "$tmp/new.jsonl" 2>/dev/null)
  fileok peek-o-mode-kept '[ "$(stat -c %a "$tmp/new.jsonl")" = 640 ]' \
    "a replaced snapshot is mode $(stat -c %a "$tmp/new.jsonl"), not its 640"
  mkfifo "$tmp/fifo"
  cat "$tmp/fifo" >"$tmp/fifo.out" &
  reader=$!
  check peek-o-fifo 0 '' "$dlqx" peek "$q" -o "$tmp/fifo"
  [ -p "$tmp/fifo" ] || kill "$reader" 2>/dev/null # replaced: the reader would wait for ever
  wait "$reader"
  fileok peek-o-fifo-kept '[ -p "$tmp/fifo" ] && [ "$(wc -l <"$tmp/fifo.out")" -eq "$depth" ]' \
    "the FIFO was replaced, or did not get the $depth records"
  printf 'precious\n' >"$tmp/victim"
  ln -s "$tmp/victim" "$tmp/link.jsonl"
  check peek-o-symlink 74 'link.jsonl is a symbolic link' "$dlqx" peek "$q" -o "$tmp/link.jsonl"
  ln -s "$tmp/victim" "$tmp/planted.jsonl.partial"
  check peek-o-planted-partial 0 '' "$dlqx" peek "$q" -o "$tmp/planted.jsonl"
  fileok peek-o-planted-partial-kept '[ "$(cat "$tmp/victim")" = precious ] && [ ! -L "$tmp/planted.jsonl" ] && [ "$(wc -l <"$tmp/planted.jsonl")" -eq "$depth" ]' \
    "a symbolic link planted at FILE.partial was written through"
  cp "$tmp/$q.jsonl" "$tmp/good.jsonl"
  check peek-o-incomplete 16 'it is kept as .*good.jsonl.partial, not as' \
    "$dlqx" peek "$q" --type quorum --delivery-limit 1 -o "$tmp/good.jsonl"
  fileok peek-o-incomplete-kept 'cmp -s "$tmp/$q.jsonl" "$tmp/good.jsonl" && [ "$(wc -l <"$tmp/good.jsonl.partial")" -eq 1 ]' \
    "an incomplete peek replaced the good older snapshot"
  # dlqx groups QUEUE: the queue read as peek reads it (nothing taken), the groups those of
  # its snapshot; broker options may follow the queue.
  "$dlqx" groups "$tmp/$q.jsonl" >"$tmp/groups-file.out" 2>/dev/null
  check groups-queue 0 'complete' "$dlqx" groups "$q"
  fileok groups-queue-same 'cmp -s "$tmp/out" "$tmp/groups-file.out"' \
    "dlqx groups $q differs from the groups of its snapshot"
  check groups-queue-json 0 '"group":"g:' "$dlqx" groups --json "$q" --no-mgmt
  fileok groups-queue-kept '[ "$("$dlqx" peek "$q" 2>/dev/null | wc -l)" -eq "$depth" ]' \
    "the queue lost messages to dlqx groups"
  check groups-queue-missing 15 'did you mean cli.orders.dlq' "$dlqx" groups cli.ordrs.dlq
  # dlqx report QUEUE: the same peek child (nothing taken); a missing queue writes no report.
  check report-queue 0 "dead letters in 1 queue" "$dlqx" report --no-journal "$q"
  check report-queue-html 0 '<svg' "$dlqx" report --no-journal --format html "$q" --no-mgmt
  fileok report-queue-kept '[ "$("$dlqx" peek "$q" 2>/dev/null | wc -l)" -eq "$depth" ]' \
    "the queue lost messages to dlqx report"
  check report-queue-missing 15 'did you mean cli.orders.dlq' "$dlqx" report --no-journal cli.ordrs.dlq
  fileok report-queue-missing-empty '[ ! -s "$tmp/out" ]' "dlqx report wrote a report of a missing queue"
  # The causal chains span queues: joined, the snapshots make trees with more than one level.
  cat "$tmp"/cli.orders.dlq.jsonl "$tmp"/cli.payments.dlq.jsonl >"$tmp/both.jsonl"
  if "$dlqx" tree --ascii "$tmp/both.jsonl" | grep -q '^|  `- \|^   `- \|^|  |- '; then
    pass=$((pass + 1))
  else
    echo "FAIL tree: no chain across orders.dlq and payments.dlq"; fail=$((fail + 1))
  fi
fi

# in_err NAME TEXT: the last check's standard error holds TEXT too.
in_err() {
  grep -q -F -- "$2" "$tmp/err" || { echo "FAIL $1: stderr lacks \"$2\":"; cat "$tmp/err"; fail=$((fail + 1)); }
}
# A mistyped queue is no queue everywhere (15), with the close names the API knows.
check queues-missing 15 'there is no queue "cli.ordrs.dlq" in virtual host "/"' \
  "$dlqx" queues cli.ordrs.dlq
in_err queues-missing 'did you mean cli.orders.dlq'
# A password only in the URL logs in to the management API too (it logged in as "guest").
pw_url=$(printf '%s' "$DLQX_URL" | sed "s|://dlqx@|://dlqx:$(cat "$DLQX_PASSWORD_FILE")@|")
check queues-url-password 0 'management API at' env -u DLQX_PASSWORD_FILE DLQX_URL="$pw_url" \
  DLQX_ALLOW_URL_PASSWORD=1 "$dlqx" queues cli.orders.dlq
in_err queues-url-password 'dead-letter queues'
check queues-missing-and-found 15 'did you mean cli.orders.dlq' \
  "$dlqx" queues cli.orders.dlq cli.ordrs.dlq
grep -q '^cli.orders.dlq ' "$tmp/out" || { echo "FAIL queues-missing-and-found: no row:"; cat "$tmp/out"; fail=$((fail + 1)); }
check queues-missing-no-mgmt 15 'close names need the management API' \
  "$dlqx" queues --no-mgmt cli.ordrs.dlq
check peek-missing 15 'did you mean cli.orders.dlq' "$dlqx" peek cli.ordrs.dlq -o "$tmp/none.jsonl"
check replay-missing 15 'did you mean cli.orders.dlq' "$dlqx" replay cli.ordrs.dlq --all --yes
check peek-missing-far 15 'no queue in virtual host "/" has a name close to it' \
  "$dlqx" peek cli.zzzzzzzz
# The explorer, before it takes the screen (here there is none).
check explorer-missing 15 'there is no queue "cli.ordrs.dlq" in virtual host "/"' "$dlqx" cli.ordrs.dlq
in_err explorer-missing 'did you mean cli.orders.dlq'

# amqp://host:port/ names the empty vhost "": said so, and the listing is not widened to
# every vhost (exit 12: no such vhost, as the AMQP login says).
empty="amqp://dlqx@127.0.0.1:$DLQX_AMQP_PORT/"
check empty-vhost-queues 12 'the path "/" names the empty vhost ""' "$dlqx" queues --url "$empty"
in_err empty-vhost-queues "for the default vhost write amqp://dlqx@127.0.0.1:$DLQX_AMQP_PORT or amqp://dlqx@127.0.0.1:$DLQX_AMQP_PORT/%2F"
[ ! -s "$tmp/out" ] || { echo "FAIL empty-vhost-queues: listed:"; cat "$tmp/out"; fail=$((fail + 1)); }
check empty-vhost-queues-all 12 'the path "/" names the empty vhost ""' "$dlqx" queues --all --url "$empty"
[ ! -s "$tmp/out" ] || { echo "FAIL empty-vhost-queues-all: listed:"; cat "$tmp/out"; fail=$((fail + 1)); }
check empty-vhost-peek 12 'the path "/" names the empty vhost ""' "$dlqx" peek cli.orders.dlq --url "$empty"
check url-garbage 2 'garbage is not an amqp:// or amqps:// URL (read as no scheme' \
  "$dlqx" queues --url garbage
check url-read-as 2 'read as scheme "http", user "guest", host "nope", port 5672' \
  "$dlqx" queues --url http://nope/x
check url-read-as-password 2 'read as scheme "amqp"' env DLQX_ALLOW_URL_PASSWORD=1 \
  "$dlqx" queues --url "amqp://dlqx:$password@127.0.0.1:99999999/%2F"

# Two vhosts: one vhost's listing is that vhost's alone; --all-vhosts lists both, with a
# VHOST column.
if ctl add_vhost cli-v2 </dev/null && ctl set_permissions -p cli-v2 dlqx '.*' '.*' '.*' </dev/null &&
  "$seed" --prefix v2. --count 3 --url "amqp://dlqx@127.0.0.1:$DLQX_AMQP_PORT/cli-v2" >"$tmp/seed2.out" 2>&1; then
  check vhost-one 0 'queues in vhost /,' "$dlqx" queues
  if grep -q '^VHOST\|v2\.' "$tmp/out"; then echo "FAIL vhost-one: another vhost listed:"; cat "$tmp/out"; fail=$((fail + 1)); fi
  check vhost-all 0 'queues in every vhost' "$dlqx" queues --all-vhosts --interval 0
  if grep -q '^VHOST  *QUEUE ' "$tmp/out" && grep -q '^cli-v2  *v2\.orders\.dlq ' "$tmp/out" &&
    grep -q '^/  *cli\.orders\.dlq ' "$tmp/out"; then pass=$((pass + 1)); else
    echo "FAIL vhost-all: no VHOST column with both vhosts:"; cat "$tmp/out"; fail=$((fail + 1)); fi
else
  echo "FAIL vhost setup:"; tail -5 "$tmp/ctl.log" "$tmp/seed2.out"; fail=$((fail + 1))
fi
ctl delete_vhost cli-v2 </dev/null

# A DLQ that fills: messages expire (TTL 0) from cli.filling into cli.filling.dlq while
# dlqx queues looks twice a second apart; the API has no rate for it, the depth's growth is
# shown (~N, source "depth").
mgmt PUT "queues/%2F/cli.filling.dlq" '{"durable":true}' >/dev/null
mgmt PUT "queues/%2F/cli.filling" '{"durable":true,"arguments":{"x-message-ttl":0,"x-dead-letter-exchange":"","x-dead-letter-routing-key":"cli.filling.dlq"}}' >/dev/null
(while [ ! -f "$tmp/stop" ]; do
  mgmt POST "exchanges/%2F/amq.default/publish" \
    '{"routing_key":"cli.filling","payload":"{}","payload_encoding":"string","properties":{}}' >/dev/null
done) &
producer=$!
i=0
until [ "$("$dlqx" queues --no-mgmt --json cli.filling.dlq 2>/dev/null | sed 's/.*"ready":\([0-9]*\).*/\1/')" -gt 0 ] 2>/dev/null; do
  i=$((i + 1)); [ $i -lt 50 ] || break; sleep 0.1
done
check filling-json 0 'counts exact' "$dlqx" queues --json --interval 1 cli.filling.dlq
if grep -q '"in_rate":[0-9.]*[1-9][0-9.e+-]*,"in_rate_source":"depth"' "$tmp/out"; then pass=$((pass + 1)); else
  echo "FAIL filling-json: no positive derived rate:"; cat "$tmp/out"; fail=$((fail + 1)); fi
check filling-table 0 "IN/S is the API's publish rate, or ~N the depth's growth over 1.0 s" \
  "$dlqx" queues cli.filling.dlq
if grep -Eq '^cli\.filling\.dlq +classic +[0-9]+ +[0-9?]+ +[0-9?]+ +~[0-9]*\.?[0-9]*[1-9]' "$tmp/out"; then
  pass=$((pass + 1))
else
  echo "FAIL filling-table: IN/S is not a positive ~N:"; cat "$tmp/out"; fail=$((fail + 1))
fi
touch "$tmp/stop"
wait "$producer"
mgmt DELETE "queues/%2F/cli.filling" >/dev/null
mgmt DELETE "queues/%2F/cli.filling.dlq" >/dev/null

# Where the dead letters live: a quorum DLQ's leader and members online, and a classic DLQ
# under a policy with classic mirroring (deprecated, removed in 4.0). The listing of a queue
# younger than the stats interval has no policy yet: looked at for up to 15 s.
mgmt PUT "queues/%2F/cli.place.dlq" '{"durable":true,"arguments":{"x-queue-type":"quorum"}}' >/dev/null
mgmt PUT "queues/%2F/cli.mirrored.dlq" '{"durable":true}' >/dev/null
mgmt PUT "policies/%2F/cli-mirrored" '{"pattern":"^cli\\.mirrored\\.","definition":{"ha-mode":"all"},"apply-to":"queues"}' >/dev/null
i=0
until "$dlqx" queues --json --interval 0 cli.mirrored.dlq 2>/dev/null | grep -q '"warning":"deprecated_policy"'; do
  i=$((i + 1)); [ $i -lt 150 ] || break; sleep 0.1
done
check placement-json 0 'management API at' "$dlqx" queues --json --interval 0 cli.place.dlq cli.mirrored.dlq
if grep -q "\"name\":\"cli.place.dlq\",.*\"available\":true,\"node\":\"$DLQX_BROKER_NODE\",\"leader\":\"$DLQX_BROKER_NODE\",\"members\":\[\"$DLQX_BROKER_NODE\"\],\"online\":\[\"$DLQX_BROKER_NODE\"\],\"placement_warnings\":\[\]" "$tmp/out" &&
  grep -q '"name":"cli.mirrored.dlq",.*"leader":null,"members":null,"online":null,"placement_warnings":\[{"warning":"deprecated_policy"' "$tmp/out"; then
  pass=$((pass + 1))
else
  echo "FAIL placement-json:"; cat "$tmp/out"; fail=$((fail + 1))
fi
check placement-table 0 'management API at' "$dlqx" queues --interval 0 cli.place.dlq cli.mirrored.dlq
if grep -Eq "^cli\.place\.dlq +quorum .* $DLQX_BROKER_NODE +1/1 online " "$tmp/out" &&
  grep -q "^  cli.mirrored.dlq: deprecated: ha-mode (policy cli-mirrored): classic queue mirroring is removed in RabbitMQ 4.0" "$tmp/out"; then
  pass=$((pass + 1))
else
  echo "FAIL placement-table:"; cat "$tmp/out"; fail=$((fail + 1))
fi
mgmt DELETE "policies/%2F/cli-mirrored" >/dev/null
mgmt DELETE "queues/%2F/cli.place.dlq" >/dev/null
mgmt DELETE "queues/%2F/cli.mirrored.dlq" >/dev/null

# Access refused: a user of its own (rabbitmqctl, the password on stdin), allowed only queues
# named cli.allowed.*, so not the DLQ.
limited=cli-limited-$$
od -An -N12 -tx1 /dev/urandom | tr -d ' \n' >"$tmp/limited.pw"
chmod 600 "$tmp/limited.pw"
limited_url="amqp://$limited@127.0.0.1:$DLQX_AMQP_PORT/%2F"
if ctl add_user "$limited" <"$tmp/limited.pw" &&
  ctl set_permissions -p / "$limited" '^cli\.allowed\.' '^cli\.allowed\.' '^cli\.allowed\.' </dev/null; then
  before=$("$dlqx" queues --no-mgmt --json cli.orders.dlq 2>/dev/null | sed 's/.*"ready":\([0-9]*\).*/\1/')
  # A peek needs read permission on the queue (basic.consume): the broker refuses it (14).
  check access-refused-peek 14 "ACCESS_REFUSED - access to queue 'cli.orders.dlq' in vhost '/' refused for user '$limited'" \
    "$dlqx" peek cli.orders.dlq --url "$limited_url" --password-file "$tmp/limited.pw" -o "$tmp/refused.jsonl"
  after=$("$dlqx" queues --no-mgmt --json cli.orders.dlq 2>/dev/null | sed 's/.*"ready":\([0-9]*\).*/\1/')
  if [ -n "$before" ] && [ "$before" = "$after" ]; then pass=$((pass + 1)); else
    echo "FAIL access-refused-depth: cli.orders.dlq held $before, then $after"; fail=$((fail + 1)); fi
  # The management API refuses a user without a management tag (HTTP 401, its own reason).
  check access-refused-queues 14 "user $limited may not use the management API at $DLQX_MGMT_URL: it needs the management, monitoring or administrator tag" \
    "$dlqx" queues --url "$limited_url" --password-file "$tmp/limited.pw"
  # A passive declare needs no permission: the depth of a named queue is still there.
  check access-limited-no-mgmt 0 'no management API' \
    "$dlqx" queues --no-mgmt cli.orders.dlq --url "$limited_url" --password-file "$tmp/limited.pw"
  # No permissions on the vhost at all: AMQP says so at login, the management API per vhost;
  # both are exit 12 (the vhost does not exist or the user may not use it).
  if ctl set_user_tags "$limited" management </dev/null && ctl clear_permissions -p / "$limited" </dev/null; then
    check no-vhost-permission-queues 12 "user $limited has no permissions on vhost / at $DLQX_MGMT_URL" \
      "$dlqx" queues --url "$limited_url" --password-file "$tmp/limited.pw"
    check no-vhost-permission-peek 12 "the virtual host \"/\" does not exist or user \"$limited\" may not use it" \
      "$dlqx" peek cli.orders.dlq --url "$limited_url" --password-file "$tmp/limited.pw"
  else
    echo "FAIL access: rabbitmqctl set_user_tags/clear_permissions:"; tail -5 "$tmp/ctl.log"; fail=$((fail + 1))
  fi
  ctl delete_user "$limited" </dev/null
else
  echo "FAIL access: rabbitmqctl add_user/set_permissions:"; tail -5 "$tmp/ctl.log"; fail=$((fail + 1))
fi

# --ask-password: typed into a real terminal (tmux), never echoed; a wrong one is exit 11;
# without a terminal, a clear error.
ask() { # name, expected exit code, expected text on the screen, password to type
  name=$1 want=$2 text=$3 typed=$4
  sock=dlqx-ask-$$
  rm -f "$tmp/ask.rc"
  tmux -L "$sock" kill-server 2>/dev/null
  tmux -L "$sock" -f /dev/null new-session -d -s a -x 160 -y 20 \
    "env -u DLQX_PASSWORD_FILE DLQX_URL='$DLQX_URL' DLQX_MGMT_URL='$DLQX_MGMT_URL' '$dlqx' peek cli.no.such --ask-password; echo \$? >'$tmp/ask.rc'; sleep 60"
  i=0
  until tmux -L "$sock" capture-pane -p -t a 2>/dev/null | grep -q '^password:'; do
    i=$((i + 1))
    [ $i -lt 100 ] || break
    sleep 0.1
  done
  tmux -L "$sock" send-keys -t a -l "$typed"
  sleep 0.3
  tmux -L "$sock" capture-pane -p -t a >"$tmp/ask.typed" 2>/dev/null
  tmux -L "$sock" send-keys -t a Enter
  i=0
  while [ ! -s "$tmp/ask.rc" ] && [ $i -lt 300 ]; do
    i=$((i + 1))
    sleep 0.1
  done
  tmux -L "$sock" capture-pane -p -t a >"$tmp/ask.screen" 2>/dev/null
  tmux -L "$sock" kill-server 2>/dev/null
  rc=$(cat "$tmp/ask.rc" 2>/dev/null || echo none)
  ok=1
  grep -q '^password:' "$tmp/ask.typed" || { echo "FAIL $name: no prompt:"; cat "$tmp/ask.typed"; ok=0; }
  [ "$rc" = "$want" ] || { echo "FAIL $name: exit $rc, expected $want"; ok=0; }
  grep -q -- "$text" "$tmp/ask.screen" || { echo "FAIL $name: the screen lacks \"$text\":"; cat "$tmp/ask.screen"; ok=0; }
  if grep -q -F -- "$typed" "$tmp/ask.typed" "$tmp/ask.screen"; then
    echo "FAIL $name: the password was echoed"
    ok=0
  fi
  if [ $ok -eq 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
if command -v tmux >/dev/null; then
  ask ask-password 15 'there is no queue "cli.no.such"' "$password"
  ask ask-password-wrong 11 'refused the login of user "dlqx"' "not-$password"
else
  echo "FAIL ask-password: tmux is not installed (scripts/deps)"; fail=$((fail + 1))
fi
# setsid: no controlling terminal, so no /dev/tty (even when the suite runs in a terminal).
check ask-password-no-terminal 2 'cannot ask for a password: no terminal' \
  env -u DLQX_PASSWORD_FILE setsid -w "$dlqx" peek cli.no.such --ask-password
echo "cli_live: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
