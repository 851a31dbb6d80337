#!/usr/bin/env bash
# The sanitizer smoke run (htop's CI idea): the real dlqx, built with AddressSanitizer and
# UndefinedBehaviorSanitizer, in a real terminal (tmux), driven through every view and action
# by a few hundred scripted keys — moving, paging, search, filters good and bad, sorting,
# tree expand/collapse, the detail's toggle, going back, the help, resizing down to 1x1 and
# up again, the mouse — then q. A run passes when dlqx exited 0 on its own and the sanitizers wrote
# nothing (ASan and LeakSanitizer at exit to one log file, UBSan to another, each absent or
# empty; and nothing of theirs on stderr, where GCC's UBSan writes when linked with ASan).
# What the screens look like is the screen tests' job (run.sh), not this.
#
# Then a generated snapshot big enough (SMOKE_BIG messages, default 60,000) that the long work
# runs in slices under the sanitizers — reading, sorting, a search, grouping, the forest linked
# on its thread — with keys in between and Esc and Ctrl-g stopping each of them half way.
#
# usage: tests/screen/smoke.sh [DLQX]
#   DLQX: a sanitizer build of dlqx; default build-asan/dlqx, built with `ninja -C build-asan`
#   (set it up with: meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
#    -Dc_args=-fno-sanitize-recover=all)
# environment: SMOKE_ONLY="FIXTURE:SCRIPT ..." runs only those (e.g. incident:tree);
#   SMOKE_SEED: another sequence for the monkey script (random keys from a fixed seed);
#   SMOKE_TRACE=1: the title and the last line after every script line;
#   SMOKE_GENSNAP: the snapshot generator (default: tests/gensnap beside DLQX; none: no big run)
# shellcheck disable=SC2034 # the scripts below are read by name (${!var})
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ $# -ge 1 ]; then
  dlqx=$1
else
  dlqx=$root/build-asan/dlqx
  if [ ! -d "$root/build-asan" ]; then
    echo "smoke: no build-asan (meson setup build-asan -Db_sanitize=address,undefined" \
      "-Db_lundef=false -Dc_args=-fno-sanitize-recover=all), and no DLQX given" >&2
    exit 2
  fi
  ninja -C "$root/build-asan" dlqx >/dev/null || { echo "smoke: the sanitizer build failed" >&2; exit 2; }
fi
[ -x "$dlqx" ] || { echo "smoke: $dlqx is not an executable" >&2; exit 2; }
dlqx=$(cd "$(dirname "$dlqx")" && pwd)/$(basename "$dlqx")
command -v tmux >/dev/null || { echo "smoke: tmux is missing" >&2; exit 2; }
# A build without the sanitizers would pass without checking anything: refused. Both are
# linked in (the dynamic symbols of libasan and libubsan, or static ones).
syms=$( (nm -D "$dlqx"; nm "$dlqx") 2>/dev/null)
if ! grep -q ' __asan_init$' <<<"$syms" || ! grep -q ' __ubsan_handle_' <<<"$syms"; then
  echo "smoke: $dlqx is not a sanitizer build (no __asan_init or __ubsan_handle_* in it):" \
    "build it with -Db_sanitize=address,undefined (see usage)" >&2
  exit 2
fi
fixtures=$root/fixtures/snapshots
tmux_term=tmux-256color
infocmp $tmux_term >/dev/null 2>&1 || tmux_term=screen-256color
infocmp $tmux_term >/dev/null 2>&1 || tmux_term=screen
sock=dlqx-smoke-$$
tmp=$(mktemp -d)
. "$(dirname "$0")/reap.sh"
screen_tag_init
trap 'tmux -L "$sock" kill-server 2>/dev/null; screen_reap smoke; rm -rf "$tmp"' EXIT
T() { tmux -L "$sock" "$@"; }
pass=0
fail=0

capture() { T capture-pane -p -t s 2>/dev/null; }
exited() { [ -s "$tmp/run/status" ]; }
settle() { # until the screen is the same in two captures 20 ms apart (2 s at most)
  local prev="" cur i=0
  while [ $i -lt 100 ]; do
    cur=$(capture)
    [ "$cur" = "$prev" ] && return 0
    prev=$cur
    sleep 0.02
    i=$((i + 1))
  done
}

# The scripts: size COLS ROWS (resize the terminal), keys K... (tmux key names, one at a
# time, the screen settled after each), type TEXT (literal text), wait TEXT (30 s at most;
# "dlqx  VIEW " is the title of a view), gone TEXT (until TEXT is off the screen, 30 s at most:
# "reading…" is on the status line until the whole file is read).
script_views='
wait dlqx  messages 
keys j j j k PgDn PgUp C-f C-b Space C-d C-u End Home G g l l h h Right Left Down Up
keys Enter
wait dlqx  detail 
keys j j C-d C-d C-u o o l l h G g End Home k Escape
keys j Enter BSpace
keys 1
wait dlqx  queues 
keys j j k G g Enter j Enter Escape Escape
keys Q j Enter G Enter Escape Escape
keys 3
wait dlqx  groups 
keys j j Enter j Enter Escape Escape G Enter Escape g
keys e G g PgDn PgUp
keys 4
wait dlqx  tree 
keys j j h l o o t t G g h h l l Enter Escape
keys t j j j o
keys 5
wait dlqx  timeline 
keys j k G g Enter Escape PgDn PgUp Enter j Enter Escape Escape
keys T j Enter Escape
keys 2 ?
wait dlqx  help 
keys j j PgDn C-d G g k q
keys F1 j Escape
keys m C-l r C-r
wait dlqx  messages 
keys G Enter o o Escape
keys 2 3 4 5 1 2 1 5 4 3 2 ? 1 ? 3 ? 4 ? 5 ? q
'
script_search='
wait dlqx  messages 
keys /
type gateway
keys Enter n n n n N N N N N Enter Escape
keys /
type no-such-thing
keys Enter n N
keys / Enter n
keys /
type ([*+?\.^$
keys Enter n
keys /
type abc
keys Escape n
keys /
type xé€😀
keys BSpace BSpace BSpace BSpace BSpace BSpace C-u Escape
keys /
type aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
keys Enter
keys f
type attempt>3 error:~timeout
keys Enter j j Enter Escape G g
keys f C-u
type tpye:x
keys Enter j
keys f C-u
type (((
keys Enter
keys f C-u
type attempt>
keys Enter
keys f C-u
type attempt>99999999999999999999999999
keys Enter
keys f C-u
type queue:orders.dlq OR (type:order.placed AND NOT attempt<2)
keys Enter j Enter Escape
keys f C-u
type -error:~timeout
keys Enter
keys f C-u
type error:~(
keys Enter
keys f C-u
type "unterminated
keys Enter
keys f C-u
type ) OR OR NOT - ( :~ >< 
keys Enter
keys f C-u Enter
keys F F
keys f
type attempt>1
keys Enter 3 j Enter Escape 4 5 1 2 / 
type order
keys Enter n N
keys F
keys f
type bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb:x
keys Enter F
keys f
type abc
keys Escape F
keys 3 /
type Timeout
keys Enter n N 4 /
type 0000
keys Enter n n N 5 / Enter 2
'
script_sort='
wait dlqx  messages 
keys s s s s s s s s s s s s S S s S G g j Enter Escape
keys 1 s s s s s S S j Enter Escape Escape
keys 3 s s s s s S j Enter Escape Escape
keys 4 s S j
keys 5 s S j
keys 2 S s S
keys f
type attempt>1
keys Enter s s s S G g F s S
'
script_tree='
wait dlqx  messages 
keys j t
wait dlqx  tree 
keys j j j h h h l l l o o o Enter Escape
keys t G g j j j j j j h l o o o PgDn PgUp End Home
keys h h h h h h h h k k k k l l l l
keys G h h o o l g
keys j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j j
keys o o o o o o o o o o k k k k k k k k k k k k k k k k k k k k k k k k k k k k k
keys /
type b0000000
keys Enter n N Escape
keys C-d C-d C-u C-u Space C-b Enter Escape t t t t
keys Escape 2 G 4 g 4 2 j j j j 4 h l o
'
script_detail='
wait dlqx  messages 
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter C-d C-d C-d o l l l h h h G o g Escape j
keys Enter t Escape Escape Enter / 
type error
keys Enter n n N Escape Escape
'
# Below 60x12 only q, Esc, Ctrl-g and Ctrl-l act (the screen says it is too small): no q
# there, which would quit; the other keys are pressed to see that they do nothing harmful.
script_resize='
wait dlqx  messages 
size 80 24
size 40 12
keys j j Enter
size 20 6
keys C-d o l h
size 10 3
keys j k G g
size 2 2
keys Escape j
size 1 1
keys j k Enter Escape 3 4 5 ? 2
size 120 40
keys Enter
size 30 8
keys C-d C-d o Escape
size 200 60
keys 3 j
size 15 5
keys Enter Escape 4 h l o
size 50 10
keys 5 j G
size 12 4
keys ? j G
size 60 7
keys /
type gateway
keys Enter
size 5 2
keys n N f
type attempt>3
keys Enter
size 9 9
keys F
size 120 40
keys 1 j
size 33 3
keys Enter
size 3 33
keys Escape G
size 120 40
keys 2 g
'

# mouse: wheel, clicks and double clicks everywhere (mouse B X Y: an X10 report of button B,
# 0 press 3 release 64/65 wheel, at column X row Y from 0), over every view.
script_mouse='
wait dlqx  messages 
mouse 0 3 5
mouse 3 3 5
mouse 65 3 5
mouse 65 3 5
mouse 64 3 5
mouse 0 3 0
mouse 3 3 0
mouse 0 3 1
mouse 3 3 1
mouse 0 3 39
mouse 3 3 39
mouse 0 3 30
mouse 3 3 30
mouse 0 3 3
mouse 3 3 3
mouse 0 3 3
mouse 3 3 3
keys Enter
mouse 65 3 5
mouse 0 3 9
mouse 3 3 9
mouse 64 3 5
keys Escape 3
mouse 0 3 3
mouse 3 3 3
mouse 65 1 2
mouse 0 3 2
mouse 3 3 2
mouse 0 3 2
mouse 3 3 2
keys 4
mouse 0 3 6
mouse 3 3 6
mouse 0 3 6
mouse 3 3 6
mouse 65 1 1
keys Escape 5
mouse 0 3 5
mouse 3 3 5
mouse 0 3 5
mouse 3 3 5
keys 1
mouse 0 3 2
mouse 3 3 2
mouse 0 3 2
mouse 3 3 2
keys ?
mouse 65 1 1
mouse 0 3 8
mouse 3 3 8
keys q
size 20 6
mouse 0 1 3
mouse 3 1 3
mouse 65 1 3
size 120 40
'

# long: the work in slices, and stopping it (Esc on the first view, Ctrl-g on any).
# Its first keys wait for rows: on a busy machine the first screen can come before any row is
# read, and Esc on it would stop the reading (as it should: the title then says "partial").
script_long='
wait m-0000
keys j j Enter j Escape Enter Escape G g j
keys s s Enter Escape
gone reading…
keys s s s s s Escape S S Escape s
keys 3 Escape Enter j Enter Escape 3
keys 4 C-g Enter C-g Enter Escape 4
wait group 1/
keys t j / 
type c-0000999
keys Enter C-g n Escape
keys 2 / 
type m-0004
keys Enter n N Escape / 
type no-such-id
keys Enter C-g
keys f
type attempt>3 error:~timeout
keys Enter Escape f C-u
type header.tenant=acme
keys Enter C-g F 3 s 4 C-g 2
keys r j Enter Escape 3 4 Escape 2 C-g
keys r Escape r
gone reading…
keys 5 Enter Escape 2 s s S
'

# monkey: 400 keys drawn from every binding but q (and a resize now and then), from a fixed
# seed so that a failure replays; SMOKE_SEED picks another sequence.
script_monkey=$(awk -v seed="${SMOKE_SEED:-20260102}" 'BEGIN {
  n = split("j k Up Down PgUp PgDn C-b C-f Space C-u C-d g G Home End h l Left Right Enter " \
            "Escape BSpace / n N f F s S 1 2 3 4 5 Q m e t T o r C-r C-l ? F1 a x : ~ > 3 - (", keys, " ")
  srand(seed)
  print "wait dlqx  messages "
  line = "keys"
  for (i = 1; i <= 400; i++) {
    line = line " " keys[int(rand() * n) + 1]
    if (i % 20 == 0) {
      print line; line = "keys"
      if (rand() < 0.3) print "size " (int(rand() * 150) + 1) " " (int(rand() * 50) + 1)
    }
  }
  print "size 120 40"
}')

# run FIXTURE SCRIPT_NAME: one run, with its own sanitizer logs.
run() {
  local fixture=$1 name=$2 script line verb rest cols=120 rows=40 nkeys=0 ntyped=0 ok=1 why="" k
  local var=script_$name where=$fixtures
  script=${!var}
  [ "$fixture" = big ] && where=$tmp
  rm -rf "$tmp/run"
  mkdir -p "$tmp/run"
  T kill-server 2>/dev/null
  sleep 0.1
  # Colours on for the incident, off for the others: both ways of drawing get exercised.
  local colour=""
  [ "$fixture" = incident ] || colour="NO_COLOR=1"
  # The terminal tmux really is, so that Home, End and the rest arrive as keys — except for
  # the monkey, which gets xterm's description: then tmux's Home and End (ESC [ 1 ~, ESC [ 4 ~)
  # are sequences curses does not know, and reach dlqx byte by byte (a harsher input).
  local term=$tmux_term
  [ "$name" = monkey ] && term=xterm-256color
  T -f /dev/null new-session -d -s s -x $cols -y $rows \
    "cd '$where' && env DLQX_NOW=1767330000000 TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$term $colour \
     ASAN_OPTIONS=detect_leaks=1:log_path=$tmp/run/asan:abort_on_error=0:print_summary=1 \
     UBSAN_OPTIONS=log_path=$tmp/run/ubsan:print_stacktrace=1:halt_on_error=1 \
     LSAN_OPTIONS=log_path=$tmp/run/asan \
     '$dlqx' open '$fixture.jsonl' 2>'$tmp/run/stderr'; echo \$? >'$tmp/run/status'; sleep 600"
  T set-option -g status off >/dev/null
  settle
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    exited && { ok=0; why="dlqx exited during the script, after $nkeys keys"; break; }
    verb=${line%% *}
    rest=${line#* }
    case $verb in
    size)
      cols=${rest% *} rows=${rest#* }
      T resize-window -t s -x "$cols" -y "$rows" 2>/dev/null
      # tmux defers a pane's resize after a recent one: wait until the terminal itself (the
      # pty dlqx reads its size from) has the new size, so that every size is really seen.
      local tty i=0
      tty=$(T display-message -p -t s '#{pane_tty}')
      while [ "$(stty -F "$tty" size 2>/dev/null)" != "$rows $cols" ] && [ $i -lt 150 ]; do
        sleep 0.02
        i=$((i + 1))
      done
      settle
      ;;
    keys)
      set -f # the keys are words, never globs (? is a key)
      for k in $rest; do
        T send-keys -t s "$k"
        nkeys=$((nkeys + 1))
        echo "$k" >>"$tmp/run/keys"
        settle
        exited && break
      done
      set +f
      ;;
    mouse)
      local b x y
      read -r b x y <<<"$rest"
      T send-keys -t s -l -- "$(printf '\033[M%b%b%b' "$(printf '\\%03o' $((32 + b)))" \
        "$(printf '\\%03o' $((33 + x)))" "$(printf '\\%03o' $((33 + y)))")"
      nkeys=$((nkeys + 1))
      echo "mouse $rest" >>"$tmp/run/keys"
      settle
      ;;
    type)
      T send-keys -t s -l -- "$rest"
      ntyped=$((ntyped + ${#rest}))
      echo "type $rest" >>"$tmp/run/keys"
      settle
      ;;
    wait | gone) # until the text is on the screen (wait) or off it (gone), 30 s at most
      local i=0 want=0 never=appeared
      [ "$verb" = gone ] && want=1 never=went
      while capture | grep -qF -- "$rest"; [ $? -ne $want ]; do
        i=$((i + 1))
        [ $i -gt 300 ] && { ok=0; why="\"$rest\" never $never"; break; }
        sleep 0.1
      done
      settle
      ;;
    *) ok=0; why="unknown script line: $line" ;;
    esac
    if [ -n "${SMOKE_TRACE:-}" ]; then
      printf '  %-40.40s -> %s | %s\n' "$line" "$(capture | head -1 | cut -c1-40)" \
        "$(capture | sed '/^ *$/d' | tail -1 | cut -c1-50)"
    fi
    [ $ok -eq 1 ] || break
  done <<EOF
$script
EOF
  capture >"$tmp/run/screen" # as the script left it, for a failure report
  # q until dlqx is gone (it goes back first from a view opened from another); Esc first,
  # to leave a search or filter prompt, where q is only a letter.
  local q=0
  while ! exited && [ $q -lt 20 ]; do
    T send-keys -t s Escape
    settle
    exited && break
    T send-keys -t s q
    q=$((q + 1))
    settle
  done
  local i=0
  while ! exited && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done # LeakSanitizer's turn
  if ! exited; then
    ok=0
    why="${why:+$why; }dlqx did not exit after $q q"
  elif [ "$(cat "$tmp/run/status")" != 0 ]; then
    ok=0
    why="${why:+$why; }dlqx exited $(cat "$tmp/run/status")"
  fi
  local f
  for f in "$tmp/run"/asan* "$tmp/run"/ubsan*; do
    [ -s "$f" ] || continue
    ok=0
    why="${why:+$why; }$(basename "$f" | sed 's/\..*//') wrote $(wc -l <"$f") lines"
  done
  # GCC's UBSan, linked with ASan, ignores log_path and reports on stderr.
  if grep -qE 'runtime error:|Sanitizer|SUMMARY: ' "$tmp/run/stderr" 2>/dev/null; then
    ok=0
    why="${why:+$why; }a sanitizer report on stderr"
  fi
  if [ $ok -eq 1 ]; then
    pass=$((pass + 1))
    printf 'ok    %-10s %-8s %4d keys, %4d characters typed\n' "$fixture" "$name" "$nkeys" "$ntyped"
    if [ -s "$tmp/run/stderr" ]; then
      echo "      (stderr: $(head -c 300 "$tmp/run/stderr" | tr '\n' ' '))"
    fi
  else
    fail=$((fail + 1))
    printf 'FAIL  %-10s %-8s %4d keys, %4d characters typed: %s\n' "$fixture" "$name" "$nkeys" \
      "$ntyped" "$why"
    for f in "$tmp/run"/asan* "$tmp/run"/ubsan* "$tmp/run/stderr"; do
      [ -s "$f" ] || continue
      echo "---- $(basename "$f"):"
      head -60 "$f"
    done
    echo "---- the last keys: $(tail -15 "$tmp/run/keys" 2>/dev/null | tr '\n' ' ')"
    echo "---- the screen at the end of the script:"
    sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$tmp/run/screen" | head -45
  fi
  T kill-server 2>/dev/null
}

for fixture in incident hostile malformed; do
  for name in views search sort tree detail resize mouse monkey; do
    # malformed.jsonl (two good records among bad ones) gets the views only.
    [ "$fixture" = malformed ] && [ "$name" != views ] && continue
    if [ -n "${SMOKE_ONLY:-}" ] && ! echo " $SMOKE_ONLY " | grep -q " $fixture:$name "; then continue; fi
    run "$fixture" "$name"
  done
done
gensnap=${SMOKE_GENSNAP:-$(dirname "$dlqx")/tests/gensnap}
if [ -x "$gensnap" ]; then
  if [ -z "${SMOKE_ONLY:-}" ] || echo " $SMOKE_ONLY " | grep -q " big:long "; then
    "$gensnap" "${SMOKE_BIG:-60000}" >"$tmp/big.jsonl" && run big long
  fi
else
  echo "smoke: note: no snapshot generator ($gensnap): the long work was not run"
fi
echo "smoke: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
