#!/usr/bin/env bash
# The writing commands as a script uses them, against the test broker (run.sh): the plan and
# dry run, the confirmation, read-only, replay / re-issue / move / delete by id, filter and
# snapshot, the journal, and a sentence plus an exit code for every refusal.
set -u
dlqx=$1
seed=${DLQX_SEED:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DLQX_JOURNAL=$tmp/journal.jsonl
password=$(cat "$DLQX_PASSWORD_FILE")
P=${DLQX_REPLAY_PREFIX:-c-} # queue names: c-orders.dlq, …

. "$(dirname "$0")/check.sh"
ok() { pass=$((pass + 1)); }
bad() {
  echo "FAIL $*"
  fail=$((fail + 1))
}
expect_depth() { # name queue n
  local d
  d=$(depth "$2")
  if [ "$d" = "$3" ]; then ok; else bad "$1: $2 holds ${d:-?} messages, expected $3"; fi
}
snapshot() { # queue file
  "$dlqx" peek "$1" -o "$2" >/dev/null 2>"$tmp/peek.err" || { bad "peek $1"; cat "$tmp/peek.err"; }
}
field() { # file n field → the field of the n-th decoded record
  "$dlqx" decode "$1" | sed -n "$2p" | sed -n "s/.*\"$3\":\"\\([^\"]*\\)\".*/\\1/p"
}

"$seed" --prefix "$P" >"$tmp/seed.out" 2>&1 || { cat "$tmp/seed.out"; bad "seed"; exit 1; }
dlq=${P}orders.dlq
n0=$(depth $dlq)
snapshot $dlq "$tmp/snap.jsonl"
id1=$(field "$tmp/snap.jsonl" 1 id)
id2=$(field "$tmp/snap.jsonl" 2 id)
[ -n "$id1" ] && [ -n "$id2" ] || { bad "no ids in the snapshot"; exit 1; }

# Nothing is written without a yes, in read-only mode, or on a dry run.
check read-only-flag 23 'read-only' "$dlqx" replay $dlq --all --yes --read-only
check read-only-env 23 'read-only' env DLQX_READ_ONLY=1 "$dlqx" replay $dlq --all --yes
check read-only-url 23 'read-only' "$dlqx" replay $dlq --all --yes --url "$DLQX_URL?read_only=true"
# Read-only fails closed: a value that is neither a yes nor a no is an error (exit 2) before
# anything is read or written, never a silent "no"; the yeses are any case.
nyn='is neither a yes nor a no'
check read-only-env-y 2 "DLQX_READ_ONLY=\"y\" $nyn" env DLQX_READ_ONLY=y "$dlqx" delete $dlq --all --yes
check read-only-env-enabled 2 "$nyn" env DLQX_READ_ONLY=enabled "$dlqx" replay $dlq --all --yes
check read-only-env-empty-url-bad 2 "read_only=\"enabled\" $nyn" env DLQX_READ_ONLY= \
  "$dlqx" delete $dlq --all --yes --url "$DLQX_URL?read_only=enabled"
check read-only-url-y 2 "$nyn" "$dlqx" replay $dlq --all --yes --url "$DLQX_URL?read_only=y"
check read-only-url-yes 23 'read-only' "$dlqx" delete $dlq --all --yes --url "$DLQX_URL?read_only=yes"
check read-only-url-On 23 'read-only' "$dlqx" replay $dlq --all --yes --url "$DLQX_URL?readonly=On"
check read-only-env-TRUE 23 'read-only' env DLQX_READ_ONLY=TRUE "$dlqx" delete $dlq --all --yes
check read-only-env-no-url-yes 23 'read-only' env DLQX_READ_ONLY=no "$dlqx" delete $dlq --all --yes \
  --url "$DLQX_URL?read_only=1"
# The explorer takes the same setting (and stops before it needs a terminal).
check read-only-explorer-env 2 "$nyn" env DLQX_READ_ONLY=enabled "$dlqx" $dlq
check read-only-explorer-url 2 "$nyn" "$dlqx" --url "$DLQX_URL?read_only=y"
expect_depth "read-only: nothing deleted" $dlq "$n0"
check unknown-url-parameter 2 'unknown URL parameter' "$dlqx" replay $dlq --all --yes --url "$DLQX_URL?frobnicate=1"
check no-terminal 2 'give --yes' setsid "$dlqx" replay $dlq --id "$id1"
check no-selection 2 'say which dead letters' "$dlqx" replay $dlq --yes
check dry-run-needs-snapshot 2 'plans from a snapshot' "$dlqx" replay $dlq --all --dry-run
check dry-run 0 "routes: the default exchange delivers to queue ${P}orders" \
  "$dlqx" replay $dlq --snapshot "$tmp/snap.jsonl" --id "$id1" --dry-run
grep -q 'x-acemq-attempt' "$tmp/out" && ok || bad "dry-run: the diff does not show the attempt"
check dry-run-no-broker 0 'not checked (no broker)' env -u DLQX_URL "$dlqx" replay $dlq \
  --snapshot "$tmp/snap.jsonl" --all --dry-run --url=
check dry-run-json 0 '"action":"replay"' "$dlqx" replay $dlq --snapshot "$tmp/snap.jsonl" --all --dry-run --json
expect_depth "nothing written yet" $dlq "$n0"
[ ! -e "$DLQX_JOURNAL" ] && ok || bad "the journal was written before any write"

# A replay by id, from the snapshot: the DLQ loses exactly that one; the source gains it.
check replay-id 0 'finished: 1 done' "$dlqx" replay $dlq --snapshot "$tmp/snap.jsonl" --id "$id1" --yes
expect_depth "replay-id dlq" $dlq $((n0 - 1))
expect_depth "replay-id source" ${P}orders 1
snapshot ${P}orders "$tmp/src.jsonl"
[ "$(field "$tmp/src.jsonl" 1 id)" = "$id1" ] && ok || bad "replay-id: the copy's id is not the dead letter's"
"$dlqx" decode "$tmp/src.jsonl" | grep -q '"attempt":1,' && ok || bad "replay-id: attempt not reset"
"$dlqx" decode "$tmp/src.jsonl" | grep -q '"error":null' && ok || bad "replay-id: x-acemq-error not cleared"
# The rest of the DLQ is the snapshot minus that message, in order.
snapshot $dlq "$tmp/after.jsonl"
"$dlqx" decode "$tmp/snap.jsonl" | sed -n 's/^{"dialect":"[a-z]*","id":"\([^"]*\)".*/\1/p' | grep -v -x -F "$id1" >"$tmp/want.ids"
"$dlqx" decode "$tmp/after.jsonl" | sed -n 's/^{"dialect":"[a-z]*","id":"\([^"]*\)".*/\1/p' >"$tmp/got.ids"
cmp -s "$tmp/want.ids" "$tmp/got.ids" && ok || bad "replay-id: the DLQ's remainder is not the rest in order"
# Replaying the same dead letter again: it is not there any more.
check replay-gone 20 'were not in the queue' "$dlqx" replay $dlq --snapshot "$tmp/snap.jsonl" --id "$id1" --yes

# Re-issue with an edit: a new id, caused by the old one, the type changed.
check reissue 0 'finished: 1 done' "$dlqx" replay $dlq --id "$id2" --reissue --with type=order.fixed --yes
# A live selection (no snapshot) does not call the queue's depth "planned" (issue 16.5:
# "planned":10 when 6 were selected): it learns its count as it reads; the end record says it.
grep '"kind":"run"' "$DLQX_JOURNAL" | tail -1 | grep -q '"planned":' &&
  bad "live selection: planned in the run record: $(grep '"kind":"run"' "$DLQX_JOURNAL" | tail -1)" || ok
grep '"kind":"end"' "$DLQX_JOURNAL" | tail -1 | grep -q '"selected":1,' && ok ||
  bad "live selection: the end record does not say 1 selected: $(grep '"kind":"end"' "$DLQX_JOURNAL" | tail -1)"
snapshot ${P}orders "$tmp/src2.jsonl"
"$dlqx" decode "$tmp/src2.jsonl" | grep -F "\"causation_id\":\"$id2\"" | grep -q '"type":"order.fixed"' &&
  ok || bad "reissue: no copy with causation = the old id and the new type"
"$dlqx" decode "$tmp/src2.jsonl" | grep -q -F "\"id\":\"$id2\"" && bad "reissue: the copy kept the old id" || ok
# Reserved names are refused.
check reserved-header 20 'reserved' "$dlqx" replay $dlq --all --with header.x-acemq-id=forged --yes --rate 1000
expect_depth "reserved: nothing sent" $dlq $((n0 - 2))

# Move and delete.
id3=$(field "$tmp/after.jsonl" 2 id)
id4=$(field "$tmp/after.jsonl" 3 id)
# The default parking queue (${P}orders.parked) does not exist here (issue 16.7): the dry run
# says so in its exit status (20: every one would be kept), the real run refuses before it
# reads anything, and --create-queue declares it, durable, of the DLQ's type.
check move-dry-nowhere 20 "queue ${P}orders.parked does not exist" "$dlqx" move $dlq \
  --snapshot "$tmp/snap.jsonl" --all --dry-run
check move-nowhere 20 "queue ${P}orders.parked does not exist" "$dlqx" move $dlq --id "$id3" --yes
check move-nowhere-snapshot 20 "give --create-queue" "$dlqx" move $dlq --snapshot "$tmp/after.jsonl" --id "$id3" --yes
expect_depth "move-nowhere keeps" $dlq $((n0 - 2))
check move-dry-create 0 "create-queue declares it" "$dlqx" move $dlq --snapshot "$tmp/snap.jsonl" \
  --all --dry-run --create-queue
check create-queue-with-to 2 "create-queue declares a queue" "$dlqx" move $dlq --all --yes \
  --create-queue --to amq.direct:k
check move-create 0 "declared queue ${P}orders.parked (durable, classic" "$dlqx" move $dlq \
  --id "$id3" --yes --create-queue
expect_depth "move-create parked" ${P}orders.parked 1
expect_depth "move-create dlq" $dlq $((n0 - 3))
"$dlqx" queues --json ${P}orders.parked 2>/dev/null | grep -q '"type":"classic"' && ok ||
  bad "move-create: ${P}orders.parked is not a classic queue"
# A quorum DLQ gets a quorum parking queue.
"$seed" --scenario bulk --count 3 --size 128 --queue-type quorum --prefix "${P}q" >"$tmp/seedq.out" 2>&1 ||
  { cat "$tmp/seedq.out"; bad "seed quorum"; }
check move-create-quorum 0 "durable, quorum" "$dlqx" move ${P}qbulk.dlq --all --yes --create-queue
expect_depth "move-create-quorum parked" ${P}qbulk.parked 3
"$dlqx" queues --json ${P}qbulk.parked 2>/dev/null | grep -q '"type":"quorum"' && ok ||
  bad "move-create-quorum: ${P}qbulk.parked is not a quorum queue"
check move 0 'finished: 1 done' "$dlqx" move $dlq --id "$id4" --to-queue ${P}inventory.parked --yes
expect_depth "move parked" ${P}inventory.parked 4
id4b=$(field "$tmp/after.jsonl" 4 id)
check delete 0 'finished: 1 done' "$dlqx" delete $dlq --id "$id4b" --yes
expect_depth "delete" $dlq $((n0 - 5))

# A filter, live (no snapshot), on broker-made dead letters: back to the first death's exchange.
a0=$(depth ${P}audit.dead)
check filter-plain 0 'finished: 12 done' "$dlqx" replay ${P}audit.dead --filter 'reason:maxlen' --yes
check unroutable 20 'unroutable' "$dlqx" replay ${P}emails.dlq --all --yes --to :${P}no-such-queue
expect_depth "unroutable keeps" ${P}emails.dlq 8

# A user who may read but not write (issue 18.9): the broker refuses the publish (403). The
# copy was not accepted: refused (14), journaled refused, nothing pending, the DLQ unchanged.
ctl() { "$DLQX_SOURCE_ROOT/scripts/broker" ctl "$DLQX_BROKER_DIR" "$@" >>"$tmp/ctl.log" 2>&1; }
reader=replay-reader-$$
od -An -N12 -tx1 /dev/urandom | tr -d ' \n' >"$tmp/reader.pw"
chmod 600 "$tmp/reader.pw"
if ctl add_user "$reader" <"$tmp/reader.pw" && ctl set_permissions -p / "$reader" '^$' '^$' '.*' </dev/null; then
  id5=$(field "$tmp/after.jsonl" 6 id)
  d0=$(depth $dlq) s0=$(depth ${P}orders)
  check refused-publish 14 "refused" "$dlqx" replay $dlq --id "$id5" --yes \
    --url "amqp://$reader@127.0.0.1:$DLQX_AMQP_PORT/%2F" --password-file "$tmp/reader.pw"
  grep -q 'ACCESS_REFUSED' "$tmp/err" && ok || { bad "refused-publish: no ACCESS_REFUSED in the report"; cat "$tmp/err"; }
  grep -q -i 'unknown, possible duplicate\|possible duplicates' "$tmp/err" && bad "refused-publish: reported as a possible duplicate" || ok
  expect_depth "refused-publish dlq" $dlq "$d0"
  expect_depth "refused-publish source" ${P}orders "$s0"
  grep '"kind":"outcome"' "$DLQX_JOURNAL" | tail -1 | grep -q '"result":"refused"' && ok ||
    bad "refused-publish: the last outcome is not refused: $(grep '"kind":"outcome"' "$DLQX_JOURNAL" | tail -1)"
  check refused-nothing-pending 0 '0 pending' "$dlqx" journal --pending
  ctl delete_user "$reader" </dev/null
else
  bad "rabbitmqctl add_user/set_permissions:"; tail -5 "$tmp/ctl.log"
fi

# The journal: every run, intents and outcomes; nothing pending after clean runs.
check journal 0 'replay' "$dlqx" journal
check journal-pending 0 '' "$dlqx" journal --pending
grep -q '"kind":"intent"' "$DLQX_JOURNAL" && ok || bad "journal: no intents"
[ "$(stat -c %a "$DLQX_JOURNAL")" = 600 ] && ok || bad "journal: mode is not 600"

# An interrupted run (issue 16.5): dlqx killed with SIGKILL mid-pass leaves pending intents;
# a new replay of the same DLQ names them and refuses; --reconcile looks at the DLQ and the
# target, resolves each, and nothing is pending afterwards.
"$seed" --scenario bulk --count 2000 --size 128 --prefix "${P}k" >"$tmp/seedk.out" 2>&1 ||
  { cat "$tmp/seedk.out"; bad "seed bulk"; }
kdlq=${P}kbulk.dlq
tries=0
while :; do
  tries=$((tries + 1))
  # Killed as soon as the run's first intents are in the journal: copies are in flight then
  # (a kill after a fixed second found every copy settled in some runs).
  kintents=$(journal_count intent)
  "$dlqx" replay $kdlq --all --yes --window 1000 >/dev/null 2>&1 &
  kpid=$!
  await_intent $kpid "$kintents"
  kill -9 $kpid 2>/dev/null
  wait $kpid 2>/dev/null
  "$dlqx" journal --pending --json >"$tmp/kpending" 2>/dev/null
  grep -q "\"run_source\":\"$kdlq\"" "$tmp/kpending" && break
  [ $tries -lt 4 ] || { bad "interrupted: no kill left a pending intent in $tries tries"; break; }
done
kd=$(depth $kdlq)
check pending-refused 21 'pending intent' "$dlqx" replay $kdlq --all --yes
grep -q 'journal --reconcile' "$tmp/err" && ok || bad "pending-refused: no word of --reconcile"
expect_depth "pending-refused: nothing sent" $kdlq "$kd"
check reconcile 0 'still pending' "$dlqx" journal --reconcile
grep -q 'gone from\|still in' "$tmp/out" && ok || { bad "reconcile: no conclusion per message"; cat "$tmp/out"; }
grep -q '"kind":"resolution"' "$DLQX_JOURNAL" && ok || bad "reconcile: no resolution record"
check reconcile-nothing-pending 0 '0 pending' "$dlqx" journal --pending
# Each conclusion is true of the broker: "still in" ids are in the DLQ, "gone from" ids not.
"$dlqx" peek $kdlq -o "$tmp/kafter.jsonl" >/dev/null 2>&1
"$dlqx" decode "$tmp/kafter.jsonl" | sed -n 's/^{"dialect":"[a-z]*","id":"\([^"]*\)".*/\1/p' | sort >"$tmp/kin"
sed -n 's/^dlqx journal: [0-9a-f]*#[0-9]* \([^:]*\): still in.*/\1/p' "$tmp/out" | sort >"$tmp/kstill"
sed -n 's/^dlqx journal: [0-9a-f]*#[0-9]* \([^:]*\): gone from.*/\1/p' "$tmp/out" | sort >"$tmp/kgone"
[ -z "$(comm -23 "$tmp/kstill" "$tmp/kin")" ] && ok || bad "reconcile: said still in the DLQ but not there"
[ -z "$(comm -12 "$tmp/kgone" "$tmp/kin")" ] && ok || bad "reconcile: said gone but in the DLQ"
check pending-then-go 0 'finished' "$dlqx" replay $kdlq --all --yes

# Each conclusion of --reconcile, on a journal written for the purpose: the same seed twice
# makes the same messages in two DLQs, so a dead letter of ra- can have "its copy" in rb-.
"$seed" --prefix "${P}ra-" >"$tmp/seedra.out" 2>&1 && "$seed" --prefix "${P}rb-" >"$tmp/seedrb.out" 2>&1 ||
  bad "seed ra/rb"
ra=${P}ra-orders.dlq rb=${P}rb-orders.dlq
snapshot $ra "$tmp/ra.jsonl"
snapshot $rb "$tmp/rb.jsonl"
"$dlqx" move $ra --snapshot "$tmp/ra.jsonl" --all --dry-run --json --to-queue x >"$tmp/ra.plan" 2>/dev/null
rid() { sed -n "$1p" "$tmp/ra.plan" | sed -n 's/^{"id":"\([^"]*\)".*/\1/p'; }
rsha() { sed -n "$1p" "$tmp/ra.plan" | sed -n 's/.*"sha256":"\([0-9a-f]*\)".*/\1/p'; }
rbid5=$("$dlqx" decode "$tmp/rb.jsonl" | sed -n '5s/^{"dialect":"[a-z]*","id":"\([^"]*\)".*/\1/p')
"$dlqx" move $rb --id "$rbid5" --to-queue ${P}rec-target --create-queue --yes >/dev/null 2>&1 ||
  bad "reconcile: could not make ${P}rec-target"
broker=$(grep '"kind":"run"' "$DLQX_JOURNAL" | head -1 | sed 's/.*"broker":"\([^"]*\)".*/\1/')
R=5e1c0b7a-0000-4000-8000-00000000000r
intent() { # seq id sha exchange routing_key
  printf '{"v":1,"kind":"intent","at":"2026-01-02T06:00:00.000Z","run":"%s","seq":%s,"op":"move","source":"%s","target":{"exchange":"%s","routing_key":"%s"},"old_id":"%s","new_id":"%s","old_sha256":"%s","new_sha256":"%s"}\n' \
    "$R" "$1" "$ra" "$4" "$5" "$2" "$2" "$3" "$3"
}
{
  printf '{"v":1,"kind":"run","at":"2026-01-02T06:00:00.000Z","run":"%s","who":"t@h","broker":"%s","vhost":"/","user":"dlqx","op":"move","source":"%s","dry_run":false,"dlqx":"0.1.0"}\n' "$R" "$broker" "$ra"
  intent 1 "$(rid 1)" "$(rsha 1)" "" "$rb"                # in the DLQ, its copy at the target
  intent 2 "$(rid 2)" "$(rsha 2)" "" "${P}rec-target"     # in the DLQ, no copy at the target
  intent 3 "gone-$(rid 3)" "$(rsha 3)" "" "${P}rec-target" # not in the DLQ
  intent 4 "$(rid 4)" "$(rsha 4)" "amq.direct" "k"         # in the DLQ, a named exchange
} >"$tmp/rec.jsonl"
rad=$(depth $ra)
check reconcile-each 3 '3 resolved, 1 still pending' "$dlqx" journal --reconcile --file "$tmp/rec.jsonl"
grep -q "#1 $(rid 1): sent and still in $ra: its copy is at $rb.*a duplicate if you replay it again; dlqx delete $ra --id ID" "$tmp/out" && ok ||
  { bad "reconcile-each: intent 1 is not a duplicate"; cat "$tmp/out"; }
grep -q "#2 $(rid 2): still in $ra and no copy at queue ${P}rec-target: not sent" "$tmp/out" && ok ||
  bad "reconcile-each: intent 2 is not kept"
grep -q "#3 gone-$(rid 3): gone from $ra" "$tmp/out" && ok || bad "reconcile-each: intent 3 is not done"
grep -q "#4 $(rid 4): still in $ra; whether its copy was delivered cannot be told (its target is exchange amq.direct" "$tmp/out" && ok ||
  bad "reconcile-each: intent 4 is not left pending"
grep -c '"kind":"resolution"' "$tmp/rec.jsonl" | grep -qx 3 && ok || bad "reconcile-each: not 3 resolution records"
grep -q '"seq":1,"result":"duplicate","in_dlq":true,"at_target":true' "$tmp/rec.jsonl" && ok || bad "reconcile-each: no duplicate record"
grep -q '"seq":2,"result":"kept","in_dlq":true,"at_target":false' "$tmp/rec.jsonl" && ok || bad "reconcile-each: no kept record"
grep -q '"seq":3,"result":"done","in_dlq":false,"at_target":false' "$tmp/rec.jsonl" && ok || bad "reconcile-each: no done record"
check reconcile-each-pending 3 '1 pending' "$dlqx" journal --pending --file "$tmp/rec.jsonl"
expect_depth "reconcile reads, removes nothing" $ra "$rad"

# confirm-after-idle: the question answered late. The connection made before it sat idle
# (rabbitmq-c sends heartbeats only from its own calls; --heartbeat 1: the broker closes it
# after about two seconds of silence), so the pass must not begin on it: one attempt, the move
# done, nothing pending. Without a new connection after the answer the pass failed or spent a
# second attempt.
if command -v tmux >/dev/null; then
  idle_j=$tmp/idle.jsonl sock=dlqx-idle-$$
  rad=$(depth $ra)
  rm -f "$tmp/idle.rc"
  tmux -L "$sock" kill-server 2>/dev/null
  tmux -L "$sock" -f /dev/null new-session -d -s a -x 200 -y 30 \
    "DLQX_URL='$DLQX_URL' DLQX_PASSWORD_FILE='$DLQX_PASSWORD_FILE' '$dlqx' move $ra --id '$(rid 2)' --to-queue ${P}rec-target --heartbeat 1 --journal '$idle_j' 2>'$tmp/idle.err'; echo \$? >'$tmp/idle.rc'; sleep 60"
  i=0
  until tmux -L "$sock" capture-pane -p -t a 2>/dev/null | grep -q 'y/N'; do
    i=$((i + 1))
    [ $i -lt 150 ] || break
    sleep 0.1
  done
  tmux -L "$sock" capture-pane -p -t a | grep -q 'y/N' && ok || bad "confirm-after-idle: no question"
  sleep 5 # two and a half heartbeat intervals and more: the broker has closed the idle connection
  tmux -L "$sock" send-keys -t a y Enter
  i=0
  while [ ! -s "$tmp/idle.rc" ] && [ $i -lt 300 ]; do
    i=$((i + 1))
    sleep 0.1
  done
  tmux -L "$sock" kill-server 2>/dev/null
  [ "$(cat "$tmp/idle.rc" 2>/dev/null)" = 0 ] && ok ||
    { bad "confirm-after-idle: exit $(cat "$tmp/idle.rc" 2>/dev/null || echo none)"; cat "$tmp/idle.err"; }
  grep -q 'finished: 1 done' "$tmp/idle.err" && ok || { bad "confirm-after-idle: not 1 done"; cat "$tmp/idle.err"; }
  grep -q '"kind":"attempt"' "$idle_j" && bad "confirm-after-idle: a second attempt: $(grep '"kind":"attempt"' "$idle_j")" || ok
  expect_depth "confirm-after-idle: one moved" $ra $((rad - 1))
else
  bad "confirm-after-idle: tmux is not installed (scripts/deps)"
fi

echo "replay cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
