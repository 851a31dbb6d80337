# Sourced by the screen scripts (run.sh, smoke.sh, live.sh). Every explorer they start in tmux
# inherits DLQX_SCREEN_TAG, unique to the run; when the run ends, screen_reap waits a few
# seconds for those explorers to be gone and kills any that are not, saying which, in what
# state and with what children. An explorer that outlives its terminal spins on a core and
# slows every later stage of CI (seen: ASan builds after a hang-up, three times in four CI
# runs on 2026-12-05, each with a child of the same command line — LeakSanitizer's
# stop-the-world tracer at exit, which suggests the sanitizer runtime, not dlqx's loop).
#
# usage: . reap.sh; screen_tag_init; ...; screen_reap NAME   (in the EXIT trap)

screen_tag_init() {
  DLQX_SCREEN_TAG="dlqx-screen-$$-$(date +%s%N)"
  export DLQX_SCREEN_TAG
}

# The explorers (command name dlqx) that carry this run's tag.
screen_tagged() {
  for e in /proc/[0-9]*/environ; do
    p=${e#/proc/}
    p=${p%/environ}
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dlqx ] || continue
    { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qx "DLQX_SCREEN_TAG=$DLQX_SCREEN_TAG" && echo "$p"
  done
}

screen_reap() { # NAME: the script's name, for the message
  [ -n "${DLQX_SCREEN_TAG:-}" ] || return 0
  i=0
  left=$(screen_tagged)
  while [ -n "$left" ] && [ $i -lt 50 ]; do
    sleep 0.1
    i=$((i + 1))
    left=$(screen_tagged)
  done
  for p in $left; do
    echo "$1: an explorer outlived its terminal by 5 s and is killed: pid $p," \
      "state $(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null)," \
      "in $(cat "/proc/$p/wchan" 2>/dev/null), children $(cat /proc/"$p"/task/*/children 2>/dev/null)," \
      "command $( { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)" >&2
    kill -9 "$p" 2>/dev/null
  done
  return 0
}
