# broker.sh: a private RabbitMQ node for a benchmark script (sourced, POSIX sh; root is the
# source tree). bench_broker_start NAME starts one with scripts/broker, reads its environment
# (DLQX_URL, DLQX_PASSWORD_FILE, DLQX_MGMT_URL, …) and stops it whenever the script ends;
# a node that does not start is reported with its log and ends the script.
dir=
bench_cleanup() {
    if [ -n "$dir" ]; then
        "$root/scripts/broker" stop --fast "$dir" >/dev/null 2>&1 || true
        dir=
    fi
}
trap bench_cleanup EXIT
trap 'bench_cleanup; exit 130' INT
trap 'bench_cleanup; exit 143' TERM

bench_broker_start() {
    b_log=$(mktemp "${TMPDIR:-/tmp}/$1.XXXXXX")
    dir=$("$root/scripts/broker" start 2>"$b_log" | tail -1) || true
    if [ -z "$dir" ] || [ ! -f "$dir/env" ]; then
        cat "$b_log" >&2
        rm -f "$b_log"
        echo "$1: the broker did not start" >&2
        exit 1
    fi
    rm -f "$b_log"
    . "$dir/env"
    export DLQX_URL DLQX_PASSWORD_FILE DLQX_MGMT_URL
}
