#!/usr/bin/env bash
# ui-bench: how long the terminal UI makes a person wait, on a 1,000,000-message snapshot.
#
#   - first screen: from launching `dlqx open FILE` to the first screen that shows message
#     rows (target < 1 s), and the time until the whole file is read ("N messages read");
#   - per keystroke: a key is sent and the screen polled (every 5 ms) until it shows the
#     key's effect (target < 50 ms), for a mix of keys both while the file is still being
#     read and after;
#   - work over all the rows (sorting, a search, the first groups and the first tree), done
#     in slices with a progress line: how long until the screen answers the key (the progress
#     line, or the result when it is quick), and until the work is done; and Esc stopping a
#     sort under way.
#
# Everything is measured from outside, as a person sees it: dlqx runs in a private tmux
# server (120x40, fixed clock, no colour) and its screen is read with capture-pane. What
# tmux itself costs (send-keys, the pane's output, capture-pane, the polling) is measured in
# the same server on an idle `cat` pane whose echo comes from the kernel, and subtracted:
# both raw and net figures are printed.
#
# usage: bench/ui-bench.sh                 (from anywhere; ~80 s on the development VM)
# environment: DLQX (default build/dlqx), GENSNAP (default build/tests/gensnap),
#   UI_BENCH_N (messages, default 1000000), UI_BENCH_LAUNCHES (clean launches, default 3),
#   UI_BENCH_SNAPSHOT (use this snapshot file instead of generating one), UI_BENCH_SAMPLES
#   (a file to keep every timed key in, in the order sent: "KIND PHASE MS" a line)
# Exits non-zero only when something failed to run (a missed target is printed as such).
# shellcheck disable=SC2154,SC2034 # now() sets the variable it is given; loop counters
set -u
export LC_NUMERIC=C # printf %f below
root=$(cd "$(dirname "$0")/.." && pwd)
dlqx=${DLQX:-$root/build/dlqx}
gensnap=${GENSNAP:-$root/build/tests/gensnap}
n=${UI_BENCH_N:-1000000}
launches=${UI_BENCH_LAUNCHES:-3}
first_target=1000 # ms
key_target=50     # ms
cols=120 rows=40

for f in "$dlqx" "$gensnap"; do
  [ -x "$f" ] || { echo "ui-bench: $f is missing (ninja -C build)" >&2; exit 2; }
done
command -v tmux >/dev/null || { echo "ui-bench: tmux is missing" >&2; exit 2; }

tmp=$(mktemp -d)
sock=dlqx-ui-bench-$$
T() { tmux -L "$sock" "$@"; }
cleanup() {
  T kill-server 2>/dev/null
  [ -n "${UI_BENCH_SAMPLES:-}" ] && cp "$tmp/samples" "$UI_BENCH_SAMPLES" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
failed=0
fail() { echo "FAILED: $*"; failed=1; }

# A sleep that forks nothing: read with a timeout on a pipe no one writes to.
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd" _ 2>/dev/null; }
# Microseconds, without a fork: set the variable named $1.
now() { printf -v "$1" '%s' "${EPOCHREALTIME//[.,]/}"; }
# nap_until T: sleep until the microsecond clock reaches T.
nap_until() {
  local t d
  now t
  d=$(($1 - t))
  [ $d -gt 0 ] && nap "$(printf '0.%06d' "$d")"
}

# ---- the snapshot ---------------------------------------------------------------------
snap=${UI_BENCH_SNAPSHOT:-}
if [ -z "$snap" ]; then
  snap=$tmp/million.jsonl
  now t0
  "$gensnap" "$n" >"$snap" || { echo "ui-bench: gensnap failed" >&2; exit 1; }
  now t1
  printf 'snapshot: %d synthetic dead letters, %d MB, generated in %.1f s (%s)\n' "$n" \
    $(($(stat -c %s "$snap") / 1000000)) "$(((t1 - t0) / 1000))e-3" "$snap"
else
  n=$(wc -l <"$snap")
  printf 'snapshot: %s, %d lines\n' "$snap" "$n"
fi
# A message near the end of the file, found by search from the top (a rare string: one hit).
rare1=$(sed -n "$((n - 2))p" "$snap" | grep -o '"message_id":"[^"]*"' | cut -d'"' -f4)
rare2=$(sed -n "$((n * 3 / 4))p" "$snap" | grep -o '"message_id":"[^"]*"' | cut -d'"' -f4)
[ -n "$rare1" ] && [ -n "$rare2" ] || { echo "ui-bench: no message ids in $snap" >&2; exit 1; }

# ---- the tmux server --------------------------------------------------------------------
T -f /dev/null new-session -d -s b -x $cols -y $rows -n base cat || exit 1
T set-option -g status off >/dev/null
T set-option -gw remain-on-exit on >/dev/null
# The terminal tmux really is (screen-256color where its own entry is not installed).
tmux_term=tmux-256color
infocmp $tmux_term >/dev/null 2>&1 || tmux_term=screen-256color
env_ui="DLQX_NOW=1767330000000 TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term NO_COLOR=1"

cap() { T capture-pane -pe -t "b:$1" 2>/dev/null; } # with attributes: the cursor bar shows
# The screen without its first and last lines, which count messages while the file is read.
mask() { local s=${1#*$'\n'}; printf '%s' "${s%$'\n'*}"; }

# wait_for WINDOW BEFORE MASKED PATTERN TIMEOUT_MS: poll every 5 ms until the screen
# differs from BEFORE (compared without the counting lines when MASKED is 1) and, when
# PATTERN is not empty, contains it. Sets $after and $hit (the clock when the capture that
# showed it returned), and $first (the clock when the screen first differed: the answer to
# the key, a progress line for long work); returns 1 on a timeout.
wait_for() {
  local w=$1 before=$2 masked=$3 pat=$4 limit=$(($5 * 1000)) start t next cur differs
  now start
  next=$start
  first=0
  while :; do
    next=$((next + 5000))
    cur=$(cap "$w")
    now t
    if [ "$masked" = 1 ]; then
      [ "$(mask "$cur")" != "$(mask "$before")" ] && differs=1 || differs=0
    else
      [ "$cur" != "$before" ] && differs=1 || differs=0
    fi
    [ $differs = 1 ] && [ "$first" = 0 ] && first=$t
    [ $differs = 1 ] && { [ -z "$pat" ] || [[ $cur == *"$pat"* ]]; } && break
    [ $((t - start)) -gt "$limit" ] && { after=$cur; return 1; }
    [ "$next" -lt "$t" ] && next=$t
    nap_until "$next"
  done
  after=$cur
  hit=$t
}

# Samples: one line "KIND PHASE MICROSECONDS" per measurement in $tmp/samples.
: >"$tmp/samples"

# key PHASE KIND PATTERN TMUX-KEY...: sends the key to dlqx and times it until its effect.
key() {
  local phase=$1 kind=$2 pat=$3 masked=0 before t0 limit=10000
  shift 3
  [ "$phase" = loading ] && masked=1
  case $kind in sort* | search* | *first*) limit=60000 ;; esac
  before=$(cap ui)
  now t0
  T send-keys -t b:ui "$@"
  if wait_for ui "$before" "$masked" "$pat" $limit; then
    echo "$kind $phase $((hit - t0))" >>"$tmp/samples"
    echo "$kind:first $phase $((first - t0))" >>"$tmp/samples"
  else
    fail "$kind ($phase): no change on the screen in $((limit / 1000)) s"
    echo "--- the screen:"
    printf '%s\n' "$after" | sed 's/\x1b\[[0-9;]*m//g' | head -8
  fi
}

# ---- baseline: tmux's own round trip ------------------------------------------------------
# A key to an idle `cat`: the tty echoes it, so all the time is tmux's and the polling's.
i=0
while [ $i -lt 50 ]; do
  before=$(cap base)
  now t0
  T send-keys -t b:base x
  wait_for base "$before" 0 "" 5000 || { fail "baseline: cat's echo never appeared"; break; }
  echo "baseline base $((hit - t0))" >>"$tmp/samples"
  [ $((i % 20)) -eq 19 ] && T send-keys -t b:base C-u
  nap 0.02
  i=$((i + 1))
done
# A launch: a new window running a shell that prints a line.
i=0
while [ $i -lt 5 ]; do
  now t0
  T new-window -d -t b: -n ui "echo ready; exec sleep 600"
  wait_for ui "" 0 "ready" 5000 || fail "baseline: a new window never printed"
  echo "launch base $((hit - t0))" >>"$tmp/samples"
  T kill-window -t b:ui
  i=$((i + 1))
done

median_of() { # KIND PHASE -> median in microseconds
  awk -v k="$1" -v p="$2" '$1 == k && $2 == p { print $3 }' "$tmp/samples" | sort -n |
    awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'
}
key_base=$(median_of baseline base)
launch_base=$(median_of launch base)

# ---- launches: first screen and the whole file read ----------------------------------------
launch() { # -> first_us (first screen with message rows), sets $t_launch
  now t_launch
  rm -f "$tmp/status"
  # dlqx's exit status through a file: tmux 3.3 does not always reap a pane's process.
  T new-window -d -t b: -n ui "cd '$tmp' && env $env_ui '$dlqx' open '$snap'; echo \$? >'$tmp/status'"
  local cur t next=$t_launch
  while :; do
    next=$((next + 5000))
    cur=$(T capture-pane -p -t b:ui 2>/dev/null)
    now t
    [[ $cur =~ m-[0-9]{8}-[0-9] ]] && break
    [ $((t - t_launch)) -gt 30000000 ] && { fail "launch: no message rows in 30 s"; return 1; }
    [ "$next" -lt "$t" ] && next=$t
    nap_until "$next"
  done
  first_us=$((t - t_launch))
}
wait_read() { # -> read_us: until the status line says that all N were read
  local cur t next
  now next
  while :; do
    next=$((next + 5000))
    cur=$(T capture-pane -p -t b:ui 2>/dev/null)
    now t
    # "N messages read" on the status line; once a key was pressed the status line shows
    # the position instead, so: the header counts N and the status line no longer reads.
    [[ $cur == *" $n messages read"* ]] && break
    [[ ${cur%%$'\n'*} == *" $n messages"* && ${cur##*$'\n'} != *reading* ]] && break
    [ $((t - t_launch)) -gt 600000000 ] && { fail "launch: not all read in 600 s"; return 1; }
    [ "$next" -lt "$t" ] && next=$t
    nap_until "$next"
  done
  read_us=$((t - t_launch))
}
quit_ui() { # q, then dlqx must have exited 0
  T send-keys -t b:ui q
  local i=0
  while [ $i -lt 500 ] && [ ! -s "$tmp/status" ]; do
    nap 0.01
    i=$((i + 1))
  done
  if [ ! -s "$tmp/status" ]; then
    fail "dlqx did not quit on q; the screen:"
    T capture-pane -p -t b:ui | head -5
  elif [ "$(cat "$tmp/status")" != 0 ]; then
    fail "dlqx exited $(cat "$tmp/status")"
  fi
  T kill-window -t b:ui 2>/dev/null
}

echo
printf 'tmux round trip (a key echoed by an idle cat, 50 times): median %.1f ms; a new window: median %.1f ms\n' \
  "$((key_base / 100))e-1" "$((launch_base / 100))e-1"
echo
echo "launch: dlqx open (${cols}x${rows}), until the first message rows, and until all $n are read"
i=1
while [ "$i" -le "$launches" ]; do
  launch || break
  wait_read || break
  echo "$first_us" >>"$tmp/firsts"
  echo "$read_us" >>"$tmp/reads"
  printf '  run %d: first screen %5.0f ms raw, %5.0f ms net | all read %6.2f s\n' "$i" \
    "$((first_us / 1000))" "$(((first_us - launch_base) / 1000))" "$((read_us / 10000))e-2"
  quit_ui
  i=$((i + 1))
done

# ---- keystrokes while the file is read, then after ------------------------------------------
launch || exit 1
printf '  run %d (keys sent while reading): first screen %5.0f ms raw\n' "$i" "$((first_us / 1000))"
# Each key changes what is shown (the cursor bar moves, or the view), so its effect is seen.
loading_keys() {
  local r
  for r in 1 2 3 4 5 6 7 8 9 10; do key loading j "" j; key loading k "" k; done
  for r in 1 2 3 4 5; do key loading PgDn "" PgDn; key loading PgUp "" PgUp; done
  for r in 1 2 3; do
    key loading G "" G
    key loading g "m-00000000-0" g
    key loading "Enter (detail)" " detail " Enter
    key loading "Esc (back)" " messages " Escape # back, while the reading goes on
  done
}
loading_keys
# Still reading when the last key was answered? (Otherwise these were not "during load".)
tail_line=$(T capture-pane -p -t b:ui | tail -1)
case $tail_line in *reading*) ;; *) echo "  note: the file was read before the loading keys ended" ;; esac
wait_read
printf '  run %d: all read %.2f s (with the keys above)\n' "$i" "$((read_us / 10000))e-2"

after_keys() {
  local r
  for r in 1 2 3 4 5 6 7 8 9 10; do key loaded j "" j; done
  for r in 1 2 3 4 5 6 7 8 9 10; do key loaded k "" k; done
  for r in 1 2 3 4 5 6; do key loaded PgDn "" PgDn; done
  for r in 1 2 3 4 5 6; do key loaded PgUp "" PgUp; done
  for r in 1 2 3 4; do key loaded G "" G; key loaded g "" g; done
  for r in 1 2 3 4; do
    key loaded "Enter (detail)" " detail " Enter
    key loaded "Esc (back)" " messages " Escape
  done
  # The first visits to the groups, the tree and the timeline group all the rows, build their
  # causal forest and count them by time: apart. Each visit is timed until its rows are
  # there (the timeline's until its table, BUCKET: its title comes first, and a visit timed
  # to the title left the counting running into the next view, whose status line the
  # progress line covered: one groups visit in three "took" 104-179 ms at 10M, 2026-12-07).
  local groups="3 groups (first)" tree="4 tree (first)" timeline="5 timeline (first)"
  for r in 1 2 3 4; do
    key loaded "$groups" "causes for" 3
    groups="3 groups"
    key loaded "$tree" "group 1/" 4
    tree="4 tree"
    key loaded "$timeline" "BUCKET (UTC)" 5
    timeline="5 timeline"
    key loaded "2 messages" " messages " 2
  done
  # Search from the top for one message near the end (and one three quarters in).
  # Found when the status line has the cursor on its line (the progress line names the id).
  local rare at
  for rare in "$rare1:$((n - 2))" "$rare2:$((n * 3 / 4))" "$rare1:$((n - 2))"; do
    at=${rare#*:}
    rare=${rare%:*}
    key loaded G "" G
    key loaded g "" g
    key loaded "/ (prompt)" "" /
    T send-keys -t b:ui -l "$rare"
    wait_for ui "" 0 "/$rare" 5000 || fail "search: the prompt does not show what was typed"
    key loaded "search Enter" " $at/$n " Enter
  done
  # Sorting a million rows: by every column in turn, then reversed.
  for r in 1 2 3 4 5 6; do key loaded "sort s" "sorted by" s; done
  key loaded "sort S" "reversed" S
  key loaded "sort S" "forward" S
  # Esc while a sort is under way: the list stays as it was (by queue, here).
  for r in 1 2 3; do
    key loaded "sort s" "sorted by as received" s # from the queue column round to the first
    key loaded "sort s" "sorted by age" s
    key loaded "sort s" "sorted by attempt" s
    key loaded "sort s" "sorted by type" s
    key loaded "sort s" "sorted by error" s
    before=$(cap ui)
    T send-keys -t b:ui s # by id: the longest sort
    wait_for ui "$before" 0 "" 10000 # the progress line, or the end of a quick sort
    if [[ $after == *sorting* ]]; then
      now t0
      T send-keys -t b:ui Escape
      if wait_for ui "" 0 "sort cancelled" 10000; then
        echo "Esc (stops a sort) loaded $((hit - t0))" >>"$tmp/samples"
      else
        fail "Esc did not stop the sort"
      fi
      key loaded "sort s" "sorted by id" s
    else
      echo "  note: the sort by id ended before Esc could be sent"
      wait_for ui "" 0 "sorted by id" 10000 || fail "the sort by id never ended"
    fi
    key loaded "sort s" "sorted by queue" s
  done
}
after_keys
quit_ui

# ---- the figures ------------------------------------------------------------------------------
# The kinds have spaces: keep the samples' kind as all fields but the last two.
awk '{ t = $NF; p = $(NF - 1); $NF = ""; $(NF - 1) = ""; sub(/ +$/, ""); print $0 "|" p "|" t }' \
  "$tmp/samples" >"$tmp/s2"
stats() { # KIND PHASE -> "count median p95 max" in microseconds, raw
  awk -F'|' -v k="$1" -v p="$2" '$1 == k && $2 == p { print $3 }' "$tmp/s2" | sort -n |
    awk '{ v[NR] = $1 } END {
      if (!NR) { print 0, 0, 0, 0; exit }
      i = int(NR * 0.95 + 0.999999); if (i > NR) i = NR
      print NR, v[int((NR + 1) / 2)], v[i], v[NR] }'
}
ms() { awk -v u="$1" 'BEGIN { printf "%7.1f", u / 1000 }'; }
net() { awk -v u="$1" -v b="$key_base" 'BEGIN { d = (u - b) / 1000; if (d < 0) d = 0; printf "%7.1f", d }'; }
table() { # PHASE KIND... : one line per kind
  local phase=$1 k c med p95 max verdict
  shift
  for k in "$@"; do
    read -r c med p95 max < <(stats "$k" "$phase")
    [ "$c" -eq 0 ] && continue
    verdict=ok
    awk -v u="$p95" -v b="$key_base" -v t="$key_target" 'BEGIN { exit !((u - b) / 1000 > t) }' &&
      verdict="OVER $key_target ms"
    printf '  %-20s %3d | %s %s %s | %s %s %s | %s\n' "${k%:first}" "$c" "$(ms "$med")" "$(ms "$p95")" \
      "$(ms "$max")" "$(net "$med")" "$(net "$p95")" "$(net "$max")" "$verdict"
  done
}
hdr() {
  printf '  %-20s %3s | %7s %7s %7s | %7s %7s %7s | %s\n' key n "median" "p95" "max" "median" \
    "p95" "max" "p95 net vs $key_target ms"
  printf '  %-20s %3s | %-23s | %-23s |\n' "" "" "   raw (ms)" "   net of tmux (ms)"
}

echo
echo "== figures ($n messages, ${cols}x${rows}; net = raw - tmux round trip $(ms "$key_base" | tr -d ' ') ms)"
sort -n "$tmp/firsts" 2>/dev/null | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }' >"$tmp/fm"
sort -n "$tmp/reads" 2>/dev/null | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }' >"$tmp/rm"
fm=$(cat "$tmp/fm") rm_=$(cat "$tmp/rm")
if [ -n "$fm" ]; then
  fnet=$((fm - launch_base))
  v=ok
  [ $((fnet / 1000)) -ge $first_target ] && v="OVER $first_target ms"
  printf 'first screen with message rows: median %s ms raw, %s ms net of a new window (%s ms) | target < %d ms: %s\n' \
    "$(ms "$fm" | tr -d ' ')" "$(ms "$fnet" | tr -d ' ')" "$(ms "$launch_base" | tr -d ' ')" $first_target "$v"
  printf 'all %d messages read: median %.2f s (%.0f messages/s)\n' "$n" "$((rm_ / 10000))e-2" \
    "$(awk -v n="$n" -v u="$rm_" 'BEGIN { print n / (u / 1e6) }')"
fi
echo
echo "keystrokes while the file is being read:"
hdr
table loading j k PgDn PgUp G g "Enter (detail)" "Esc (back)"
echo
echo "keystrokes after it was read:"
hdr
table loaded j k PgDn PgUp G g "Enter (detail)" "Esc (back)" "3 groups" "4 tree" "5 timeline" \
  "2 messages" "/ (prompt)" "Esc (stops a sort)"
echo
echo "work over all $n rows, in slices: until the screen answers (a progress line, or the"
echo "result when it is quick; target < 50 ms)"
hdr
table loaded "3 groups (first):first" "4 tree (first):first" "5 timeline (first):first" \
  "search Enter:first" "sort s:first" "sort S:first"
echo "... and until it is done (apart from the 50 ms target):"
hdr
table loaded "3 groups (first)" "4 tree (first)" "5 timeline (first)" "search Enter" "sort s" \
  "sort S"
total=$(grep -vc ':first ' "$tmp/samples")
base_n=$(grep -c ' base ' "$tmp/samples")
echo
echo "$((total - base_n)) keystrokes timed, $base_n baseline round trips"
if [ $failed -ne 0 ]; then
  echo "ui-bench: something failed to run (see FAILED above)"
  exit 1
fi
exit 0
