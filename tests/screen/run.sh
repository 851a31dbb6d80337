#!/bin/sh
# Screen tests: the real dlqx binary in a real terminal (tmux), driven by keys, its whole
# screen captured and compared with an expected file — on a fixed clock, size and locale.
#
#   cases/NAME.keys        the script (below)
#   cases/NAME.LABEL.screen  the expected screen at each `snap LABEL`
#
# Script lines:  args ARGS…        dlqx's arguments (run from the fixtures directory)
#                size COLS ROWS    terminal size (default 120 40) — before args, or to resize
#                keys K…           tmux send-keys names (j, Enter, Escape, C-d, /, 'text'…)
#                type TEXT         literal text
#                wait TEXT         until TEXT is on the screen (10 s at most)
#                waitlong TEXT     the same, 180 s at most (a million messages read)
#                snap LABEL        compare the screen with NAME.LABEL.screen
#                env VAR=VALUE     for dlqx (before args)
#                gen N FILE        writes N synthetic dead letters to FILE in a scratch
#                                  directory (DLQX_GENSNAP), and runs dlqx from there
# usage: run.sh DLQX CASES_DIR [--update] [NAME...]
set -u
dlqx=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$(cd "$2" && pwd)
shift 2
update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
only="$*"
fixtures=${DLQX_FIXTURES:-$(cd "$dir/../../fixtures" && pwd)}
# The terminal tmux really is (as the smoke run uses), so that every key arrives as the
# sequence its description says; screen-256color where tmux's own entry is not installed.
tmux_term=tmux-256color
infocmp $tmux_term >/dev/null 2>&1 || tmux_term=screen-256color
infocmp $tmux_term >/dev/null 2>&1 || tmux_term=screen
sock=dlqx-screen-$$
tmp=$(mktemp -d)
. "$(dirname "$0")/reap.sh"
screen_tag_init
trap 'tmux -L "$sock" kill-server 2>/dev/null; screen_reap screen; rm -rf "$tmp"' EXIT
pass=0
fail=0

capture() { tmux -L "$sock" capture-pane -p -t t 2>/dev/null; }

settle() { # until the screen stops changing (and is not empty)
  prev=""
  i=0
  while [ $i -lt 100 ]; do
    cur=$(capture | md5sum)
    [ "$cur" = "$prev" ] && [ $i -gt 2 ] && return 0
    prev=$cur
    sleep 0.1
    i=$((i + 1))
  done
}

for keys in "$dir"/cases/*.keys; do
  name=$(basename "$keys" .keys)
  if [ -n "$only" ] && ! echo " $only " | grep -q " $name "; then continue; fi
  cols=120 rows=40 envs="" ok=1 started=0 cwd=$fixtures
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
    ''|'#'*) continue ;;
    esac
    verb=${line%% *}
    rest=${line#* }
    [ "$verb" = "$line" ] && rest=""
    case "$verb" in
    size)
      cols=${rest% *} rows=${rest#* }
      if [ $started -eq 1 ]; then
        tmux -L "$sock" resize-window -t t -x "$cols" -y "$rows" 2>/dev/null ||
          tmux -L "$sock" resize-pane -t t -x "$cols" -y "$rows"
        settle
      fi
      ;;
    env) envs="$envs $rest" ;;
    gen)
      n=${rest% *} f=${rest#* }
      if [ ! -s "$tmp/$f" ]; then
        "${DLQX_GENSNAP:?DLQX_GENSNAP names the generator}" "$n" >"$tmp/$f" || ok=0
      fi
      cwd=$tmp
      ;;
    args)
      tmux -L "$sock" kill-server 2>/dev/null
      tmux -L "$sock" -f /dev/null new-session -d -s t -x "$cols" -y "$rows" \
        "cd '$cwd' && env DLQX_NOW=1767330000000 TZ=UTC LC_ALL=C.UTF-8 LANG=C.UTF-8 TERM=$tmux_term NO_COLOR=1 $envs ${DLQX_WRAPPER:-} '$dlqx' $rest; rc=\$?; echo; echo '[dlqx exited' \$rc']'; sleep 30"
      tmux -L "$sock" set-option -t t status off >/dev/null
      started=1
      settle
      ;;
    keys)
      # shellcheck disable=SC2086
      tmux -L "$sock" send-keys -t t $rest
      settle
      ;;
    type)
      tmux -L "$sock" send-keys -t t -l "$rest"
      settle
      ;;
    wait|waitlong)
      i=0
      limit=100
      [ "$verb" = waitlong ] && limit=1800
      until capture | grep -qF -- "$rest"; do
        i=$((i + 1))
        if [ $i -gt $limit ]; then
          echo "FAIL $name: \"$rest\" never appeared"
          capture | head -50
          ok=0
          break
        fi
        sleep 0.1
      done
      settle
      ;;
    snap)
      want="$dir/cases/$name.$rest.screen"
      capture >"$tmp/screen"
      if [ $update -eq 1 ]; then
        cp "$tmp/screen" "$want"
      elif ! cmp -s "$tmp/screen" "$want"; then
        echo "FAIL $name ($rest): the screen differs from $want:"
        diff -u "$want" "$tmp/screen" | head -40
        ok=0
      fi
      # Nothing from a message may reach the terminal raw: no control byte in the capture.
      if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$tmp/screen"; then
        echo "FAIL $name ($rest): a raw control byte is on the screen"
        ok=0
      fi
      ;;
    *) echo "FAIL $name: unknown line: $line"; ok=0 ;;
    esac
  done <"$keys"
  tmux -L "$sock" kill-server 2>/dev/null
  if [ $ok -eq 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "screen: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
