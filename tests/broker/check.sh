# check.sh: what the shell suites against the test broker share (sourced, POSIX sh).
# The caller sets tmp (a scratch directory) and password (the test user's password);
# pass and fail count the checks.
#
#   check NAME RC TEXT COMMAND...   runs COMMAND (stdin /dev/null): its exit status must be RC,
#                                   its output or standard error must hold TEXT (skipped when
#                                   TEXT is ""),
#                                   and neither its output nor the journal ($DLQX_JOURNAL, when
#                                   set) may hold the password.
#   depth QUEUE                     its ready messages (dlqx queues; $dlqx is the binary)
#   journal_count KIND              how many records of that kind $DLQX_JOURNAL holds (0 when
#                                   there is no journal yet)
#   await_intent PID N              waits until the journal holds more than N intents (a pass
#                                   has started sending), or PID has ended; 30 s at most
#   mgmt METHOD PATH [JSON]         a request to the management API (curl; the credentials in
#                                   a config on stdin, never on the command line); prints the
#                                   HTTP status
#   mgmt_get PATH                   the management API's JSON at PATH (as mgmt)
#   tap_count                       how many server-named queues (amq.gen-*: dlqx follow's
#                                   taps) the broker has, by the management API
#   wait_for TENTHS COMMAND...      runs COMMAND every tenth of a second until it succeeds;
#                                   false after TENTHS tries
pass=0
fail=0
check() {
  c_name=$1 c_want=$2 c_text=$3
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  c_rc=$?
  c_ok=1
  [ "$c_rc" -eq "$c_want" ] || { echo "FAIL $c_name: exit $c_rc, expected $c_want"; c_ok=0; }
  if [ -n "$c_text" ] && ! grep -q -- "$c_text" "$tmp/out" "$tmp/err"; then
    echo "FAIL $c_name: the output lacks \"$c_text\":"
    cat "$tmp/out" "$tmp/err"
    c_ok=0
  fi
  c_where="$tmp/out $tmp/err"
  [ -n "${DLQX_JOURNAL:-}" ] && [ -f "$DLQX_JOURNAL" ] && c_where="$c_where $DLQX_JOURNAL"
  # shellcheck disable=SC2086 # c_where is a list of paths without spaces
  if grep -q -F -- "$password" $c_where; then
    echo "FAIL $c_name: the password was printed or journaled"
    c_ok=0
  fi
  if [ $c_ok -eq 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
mgmt() { # method, path, [json body]
  printf 'user = "dlqx:%s"\n' "$password" |
    curl -q -s -K - -o /dev/null -w '%{http_code}' --max-time 10 -X "$1" \
      -H 'content-type: application/json' ${3:+--data-binary "$3"} "${DLQX_MGMT_URL}api/$2"
}
depth() {
  "$dlqx" queues --no-mgmt --json "$1" 2>/dev/null | sed -n 's/.*"ready":\([0-9]*\).*/\1/p' | head -1
}
journal_count() {
  n=$(grep -c "\"kind\":\"$1\"" "$DLQX_JOURNAL" 2>/dev/null) || true
  echo "${n:-0}"
}
await_intent() {
  waited=0
  while [ "$(journal_count intent)" -le "$2" ] && kill -0 "$1" 2>/dev/null && [ $waited -lt 3000 ]; do
    sleep 0.01
    waited=$((waited + 1))
  done
}
mgmt_get() {
  printf 'user = "dlqx:%s"\n' "$password" |
    curl -q -s -K - --max-time 10 "${DLQX_MGMT_URL}api/$1"
}
tap_count() {
  mgmt_get "queues/%2F?columns=name" | tr '{' '\n' | grep -c '"name":"amq\.gen-'
}
wait_for() {
  w_n=$1
  shift
  while [ "$w_n" -gt 0 ]; do
    "$@" && return 0
    sleep 0.1
    w_n=$((w_n - 1))
  done
  return 1
}
