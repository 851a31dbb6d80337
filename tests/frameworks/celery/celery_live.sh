#!/usr/bin/env bash
# The Celery dialect against the REAL library: a private broker, a real Celery worker
# (Debian's python3-celery) that dead-letters real tasks through the broker's DLX, `dlqx
# decode` of a live peek checked field by field, then `dlqx replay` (Celery's move: the id
# and every header kept) and `dlqx replay --reissue` (a new id, parent = the old one) of two
# of them — and the same worker runs both copies successfully this time (the task reads a flag
# file the test creates after the first failure): the copies are what Celery accepts.
# usage: celery_live.sh DLQX [SOURCE_ROOT]      exit 77 (skipped) without python3-celery
# Bounded (about 30-60 s; every wait has a deadline); the broker and the worker are stopped
# on every exit.
set -u
case $1 in /*) dlqx=$1 ;; *) dlqx=$PWD/$1 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
root=${2:-$(cd "$here/../../.." && pwd)}
py=/usr/bin/python3 # Debian's python, where python3-celery lives (not a pyenv shim)
tmp=$(mktemp -d)
dir=''
worker_pid=''
pass=0
fail=0
start=$SECONDS

stop_worker() {
	[ -n "$worker_pid" ] || return 0
	kill -TERM "$worker_pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$worker_pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$worker_pid" 2>/dev/null
	wait "$worker_pid" 2>/dev/null
	worker_pid=''
}
cleanup() {
	stop_worker
	[ -n "$dir" ] && "$root/scripts/broker" stop "$dir" --fast >/dev/null 2>&1
	if [ -n "${KEEP_TMP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ok() { pass=$((pass + 1)); }
say() { echo "celery_live: [$((SECONDS - start)) s] $*"; }
bad() {
	echo "FAIL $*"
	fail=$((fail + 1))
}
die() {
	echo "FAIL $*"
	[ -f "$tmp/worker.log" ] && { echo "--- worker log (tail)"; tail -25 "$tmp/worker.log"; }
	exit 1
}

if ! $py -c 'import celery' 2>/dev/null; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		echo "celery_live: installing python3-celery" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-celery >/dev/null 2>&1 ||
			{ apt-get update -qq >/dev/null 2>&1 &&
				DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-celery >/dev/null 2>&1; }
	fi
	$py -c 'import celery' 2>/dev/null || { echo "SKIP: python3-celery is not installed"; exit 77; }
fi

dir=$("$root/scripts/broker" start 2>"$tmp/broker.err" | tail -1)
if [ -z "$dir" ] || [ ! -f "$dir/env" ]; then
	cat "$tmp/broker.err"
	dir=''
	die "the broker did not start"
fi
# shellcheck disable=SC1091
. "$dir/env"
say "broker up"
export DLQX_URL DLQX_PASSWORD_FILE DLQX_AMQP_PORT DLQX_BROKER_USER
export DLQX_JOURNAL=$tmp/journal.jsonl
export CELERY_DLQX_FLAG=$tmp/fixed CELERY_DLQX_DONE=$tmp/done
cd "$here" || die "cd $here"

depth() { "$dlqx" queues --no-mgmt --json "$1" 2>/dev/null | sed -n 's/.*"ready":\([0-9]*\).*/\1/p' | head -1; }
wait_for() { # SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds
	local until=$((SECONDS + $1)) what=$2
	shift 2
	while ! "$@"; do
		[ $SECONDS -lt $until ] || die "timed out ($((SECONDS - start)) s): $what"
		sleep 0.2
	done
}
dlq_holds() { [ "$(depth celery.dlq)" = "$1" ]; }
done_has() { [ -f "$tmp/done" ] && [ "$(wc -l <"$tmp/done")" -ge "$1" ]; }

$py publish.py declare >"$tmp/declare.log" 2>&1 || { cat "$tmp/declare.log"; die "declare"; }
$py publish.py send-live >"$tmp/ids" 2>"$tmp/send.err" || { cat "$tmp/send.err"; die "send"; }
id_of() { awk -v c="$1" '$1 == c {print $2}' "$tmp/ids"; }
replay_id=$(id_of replay)
reissue_id=$(id_of reissue)
reject_id=$(id_of reject)

$py -m celery -A app worker -Q celery,tasks --pool=solo --without-mingle --without-gossip \
	--without-heartbeat -n live@%h -l info >"$tmp/worker.log" 2>&1 &
worker_pid=$!
wait_for 45 "4 dead letters in celery.dlq" dlq_holds 4
ok
say "the worker dead-lettered 4 tasks"

# A live peek, decoded: every field of the dialect from what the real worker dead-lettered.
"$dlqx" peek celery.dlq -o "$tmp/snap.jsonl" 2>"$tmp/peek.err" || { cat "$tmp/peek.err"; die "peek"; }
"$dlqx" decode "$tmp/snap.jsonl" >"$tmp/decoded.jsonl" 2>"$tmp/decode.err" || { cat "$tmp/decode.err"; die "decode"; }
if $py - "$tmp/decoded.jsonl" "$replay_id" "$reissue_id" "$reject_id" >"$tmp/check.out" 2>&1 <<'EOF'; then ok; else cat "$tmp/check.out"; bad "decoded fields"; fi
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
replay_id, reissue_id, reject_id = sys.argv[2:5]
by_type = {}
for r in recs:
    by_type.setdefault(r.get('type'), []).append(r)
errors = []
def check(what, got, want):
    if got != want:
        errors.append(f'{what}: {got!r}, expected {want!r}')
check('dialects', sorted({r['dialect'] for r in recs}), ['celery'])
ids = {r['id'] for r in recs}
for i in (replay_id, reissue_id, reject_id):
    check(f'id {i} decoded', i in ids, True)
for r in recs:
    c = r.get('celery') or {}
    check('type = celery.task', r['type'], c.get('task'))
    check('error_from_broker', r['error_from_broker'], True)
    check('error_type', r.get('error_type'), None)
    check('attempt', r['attempt'], 0)
    check('failed_at_ms set', isinstance(r.get('failed_at_ms'), int), True)
    check('source.how', r['source'].get('how'), 'x-first-death-queue')
    check('accepted', r['accepted'], True)
    check('protocol', c.get('protocol'), 2)
    check('death_count', c.get('death_count'), 1)
refund = [r for r in recs if r['type'] == 'shop.tasks.refund']
check('refunds', len(refund), 2)
for r in refund:
    check('refund source', (r['source']['queue'], r['source']['exchange'], r['source']['routing_key']),
          ('tasks', '', 'tasks'))
    check('refund correlation = root_id = id', r['correlation_id'], r['id'])
    check('refund causation', r['causation_id'], None)
inv = by_type.get('shop.tasks.invoice', [])
check('invoice', len(inv), 1)
if inv:
    r = inv[0]
    check('chain causation = parent_id', r['causation_id'], r['celery']['parent_id'])
    check('chain correlation = root_id', r['correlation_id'], r['celery']['root_id'])
    check('chain root != parent', r['celery']['root_id'] == r['celery']['parent_id'], True)
    check('chain source', r['source']['queue'], 'celery')
    check('kwargsrepr', r['celery'].get('kwargsrepr'), "{'customer': 'ACME'}")
for e in errors:
    print('  ' + e)
sys.exit(1 if errors else 0)
EOF

say "decoded"
# The fix is deployed; replay one (Celery's move: same id), re-issue the other (a new id).
touch "$tmp/fixed"
"$dlqx" replay celery.dlq --id "$replay_id" --yes >"$tmp/replay.out" 2>&1 ||
	{ cat "$tmp/replay.out"; die "replay --id $replay_id"; }
"$dlqx" replay celery.dlq --id "$reissue_id" --reissue --yes >"$tmp/reissue.out" 2>&1 ||
	{ cat "$tmp/reissue.out"; die "replay --reissue --id $reissue_id"; }
wait_for 30 "the worker ran both copies" done_has 2
ok
say "the worker ran the replayed and the re-issued task"
line_replay=$(grep " R-7 " "$tmp/done")
line_reissue=$(grep " R-8 " "$tmp/done")
case $line_replay in
"$replay_id R-7 12.5 retries=0 parent=None root=$replay_id") ok ;;
*) bad "the replayed task ran as: $line_replay (expected id $replay_id, same root, no parent)" ;;
esac
new_id=${line_reissue%% *}
case $line_reissue in
"$reissue_id "*) bad "the re-issued task kept its id: $line_reissue" ;;
*" R-8 3 retries=0 parent=$reissue_id root=$reissue_id") ok ;;
*) bad "the re-issued task ran as: $line_reissue (expected a new id, parent = root = $reissue_id)" ;;
esac
if [[ $new_id =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]]; then
	ok
else
	bad "the re-issued task id is not a UUID v4: $new_id"
fi
for id in "$replay_id" "$new_id"; do
	if grep -q "Task shop.tasks.refund\[$id\] succeeded" "$tmp/worker.log"; then
		ok
	else
		bad "the worker log does not show $id succeeding"
	fi
done
# Both dead letters left the DLQ (removed after the broker confirmed the copy); the others stay.
wait_for 10 "2 dead letters left" dlq_holds 2
ok

stop_worker
echo "celery_live: $pass passed, $fail failed in $((SECONDS - start)) s"
[ $fail -eq 0 ]
