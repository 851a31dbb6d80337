#!/usr/bin/env bash
# Captures fixtures/celery/ from the REAL Celery library (Debian's python3-celery): a
# private broker, a task queue with a dead-letter exchange, a real worker rejecting tasks
# into it, `dlqx peek` of the DLQ, and Celery's own move (celery.contrib.migrate) of two
# dead letters back, captured before and after a worker fails them again.
# Test-only: run by hand when the fixtures must be made again (see fixtures/celery/SOURCES.md).
#   tests/frameworks/celery/capture.sh [BUILD_DIR]     (default: build)
# CELERY_FIXTURES_OUT=DIR writes elsewhere (default: fixtures/celery). derive.py then adds the
# reconstructed cases, the re-issue expectations and every .expect.json.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
dlqx=$build/dlqx
out=${CELERY_FIXTURES_OUT:-$root/fixtures/celery}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=/usr/bin/python3 # Debian's python, with python3-celery (the PATH's may be another)
tmp=$(mktemp -d)
dir=''
worker_pid=''
cleanup() {
	if [[ -n $worker_pid ]]; then kill -TERM "$worker_pid" 2>/dev/null || true; fi
	if [[ -n $dir ]]; then "$root/scripts/broker" stop "$dir" --fast >/dev/null 2>&1 || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

$py -c 'import celery' 2>/dev/null || { echo "capture.sh: apt-get install python3-celery" >&2; exit 1; }
dir=$("$root/scripts/broker" start 2>"$tmp/broker.err" | tail -1) || { cat "$tmp/broker.err" >&2; exit 1; }
# shellcheck disable=SC1091
. "$dir/env"
export DLQX_URL DLQX_PASSWORD_FILE DLQX_AMQP_PORT DLQX_BROKER_USER
cd "$here"

depth() { "$dlqx" queues --no-mgmt --json "$1" 2>/dev/null | sed -n 's/.*"ready":\([0-9]*\).*/\1/p' | head -1; }
# run_worker N: a real worker until the DLQ holds N messages (at most 60 s), then stopped.
run_worker() {
	$py -m celery -A app worker -Q celery,tasks --pool=solo --without-mingle --without-gossip \
		--without-heartbeat -n w1@%h -l info >>"$tmp/worker.log" 2>&1 &
	worker_pid=$!
	local i=0
	while [[ $(depth celery.dlq) != "$1" ]]; do
		((i++ < 600)) || { echo "capture.sh: the DLQ never reached $1 (worker log: tail)" >&2; tail -30 "$tmp/worker.log" >&2; exit 1; }
		sleep 0.1
	done
	kill -TERM "$worker_pid"
	wait "$worker_pid" || true
	worker_pid=''
}

$py publish.py declare
$py publish.py send >"$tmp/ids"
CELERY_DLQX_PROTOCOL=1 $py publish.py send-protocol1 >>"$tmp/ids"
$py publish.py near-miss >/dev/null
run_worker 13
"$dlqx" peek celery.dlq -o "$tmp/dlq1.jsonl" 2>/dev/null
rm -f "$out"/*.jsonl "$out"/*.expect.json
$py split.py "$tmp/ids" "$tmp/dlq1.jsonl" "$out"

# Celery's own move back to where each died (the first death's exchange and routing key):
# the copies are captured in their queues before a worker takes them.
exc=$(awk '$1 == "exception" {print $2}' "$tmp/ids")
ref=$(awk '$1 == "default-exchange" {print $2}' "$tmp/ids")
$py publish.py move "$exc" '' celery
$py publish.py move "$ref" '' tasks
"$dlqx" peek celery -o "$tmp/moved-celery.jsonl" 2>/dev/null
"$dlqx" peek tasks -o "$tmp/moved-tasks.jsonl" 2>/dev/null
# What Celery's move wrote is the replay expectation (tests/broker/dialects_live.sh).
cp "$tmp/moved-celery.jsonl" "$out/exception.replay.jsonl"
cp "$tmp/moved-tasks.jsonl" "$out/default-exchange.replay.jsonl"

# The worker fails them again: their second death (x-death count 2 on RabbitMQ < 3.13,
# which takes a client's x-death for its own).
run_worker 13
"$dlqx" peek celery.dlq -o "$tmp/dlq2.jsonl" 2>/dev/null
grep -F -e "\"id\":\"$exc\"" -e "\"id\":\"$ref\"" "$tmp/dlq2.jsonl" >"$out/dead-twice.jsonl"

# Redaction (documented in SOURCES.md): the sender's host name in `origin`, nothing else.
host=$(hostname)
sed -i "s/\\(\"origin\":\"[^\"@]*\\)@${host}\"/\\1@host\"/g" "$out"/*.jsonl
$py derive.py "$out" >/dev/null
for f in "$out"/*.jsonl; do "$dlqx" cat "$f" >/dev/null || { echo "capture.sh: $f does not read back" >&2; exit 1; }; done
echo "celery $($py -c 'import celery; print(celery.__version__)')" \
	"kombu $($py -c 'import kombu; print(kombu.__version__)')" \
	"amqp $($py -c 'import amqp; print(amqp.__version__)')" \
	"rabbitmq $("$root/scripts/broker" ctl "$dir" version 2>/dev/null | tail -1)" >"$out/CAPTURED"
ls -l "$out"
