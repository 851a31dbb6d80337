# shellcheck shell=bash disable=SC2154,SC2034 # broker and tmp are the sourcing script's; it uses own and password
# tests/cluster/lib.sh: what the cluster tests share, sourced once broker (scripts/broker) and
# tmp (a private directory) are set: ok and bad (bad counts into fails), and cluster_up, which
# leaves the cluster in C: DLQX_TEST_CLUSTER_DIR's when set, else a new one of three nodes
# (own=1; scripts/broker's messages in $tmp/cluster.log, shown when it does not start: exit 1),
# with its env sourced and its password in password.
fails=0
ok() { printf 'ok   %s\n' "$*"; }
bad() {
	printf 'FAIL %s\n' "$*"
	fails=$((fails + 1))
}
own=0
C=${DLQX_TEST_CLUSTER_DIR:-}
cluster_up() {
	if [[ -z $C ]]; then
		C=$("$broker" cluster start 3 2>"$tmp/cluster.log" | tail -n 1)
		if [[ -z $C || ! -f $C/env ]]; then
			echo "FAIL the cluster did not start:"
			cat "$tmp/cluster.log"
			exit 1
		fi
		own=1
	fi
	# shellcheck source=/dev/null
	. "$C/env"
	password=$(cat "$DLQX_PASSWORD_FILE")
}
