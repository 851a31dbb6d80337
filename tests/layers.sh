#!/bin/sh
# The layers of src/ (src/meson.build): each layer may include only its own headers and those
# of the layers below it. The build enforces it through include paths; this test also refuses
# the ways around them — a path in an include ("../store/store.h", "broker/conn.h") — and
# names every wrong-way include it finds, so a failure says what to move.
#
# usage: layers.sh SRC_DIR
set -u
src=$1
allowed() { # layer -> the layers it may include from
  case $1 in
  base) echo "base" ;;
  wire) echo "wire base" ;;
  dialects) echo "dialects wire base" ;;
  store) echo "store dialects wire base" ;;
  analysis) echo "analysis store dialects wire base" ;;
  broker) echo "broker wire base" ;;
  options) echo "options broker wire base" ;;
  replay) echo "replay analysis options broker store dialects wire base" ;;
  *) echo "" ;;
  esac
}
bad=0
checked=0
for dir in "$src"/*/; do
  layer=$(basename "$dir")
  [ "$layer" = cli ] && continue
  ok=$(allowed "$layer")
  if [ -z "$ok" ]; then
    echo "layers: src/$layer is not a known layer (add it to tests/layers.sh and src/meson.build)"
    bad=1
    continue
  fi
  for f in "$dir"*.c "$dir"*.h; do
    [ -f "$f" ] || continue
    checked=$((checked + 1))
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
      n=${line%%:*}
      h=$(printf '%s\n' "$line" | sed 's/.*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/')
      case $h in
      */*)
        echo "src/$layer/$(basename "$f"):$n: \"$h\": a path in an include goes around the layers"
        continue
        ;;
      esac
      found=""
      for l in $ok; do
        [ -f "$src/$l/$h" ] && found=$l && break
      done
      if [ -z "$found" ]; then
        owner=$(cd "$src" && ls -d */"$h" 2>/dev/null | head -1)
        echo "src/$layer/$(basename "$f"):$n: \"$h\" is ${owner:+in src/${owner%%/*}, }not in a layer below $layer"
      fi
    done
  done
done >"${TMPDIR:-/tmp}/dlqx-layers.$$"
if [ -s "${TMPDIR:-/tmp}/dlqx-layers.$$" ]; then
  cat "${TMPDIR:-/tmp}/dlqx-layers.$$"
  bad=1
fi
rm -f "${TMPDIR:-/tmp}/dlqx-layers.$$"
if [ "$checked" -lt 50 ]; then
  echo "layers: only $checked files under $src: wrong directory?"
  bad=1
fi
[ $bad -eq 0 ] && echo "layers: $checked files, every include from its own layer or below"
exit $bad
