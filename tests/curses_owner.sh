#!/bin/sh
# One owner of curses (htop's CRT.c): in ui/, only term.c talks to curses — set-up, keys,
# the cursor, the drawing calls, handing the terminal to $EDITOR — and every other file goes
# through term.h (TERM_KEY_* instead of KEY_*, term_cursor_at instead of move, term_suspend
# instead of endwin). The one other file allowed is termcap.c: it asks terminfo whether TERM
# can draw at all before the screen is taken, and has a file of its own because
# <ncursesw/term.h> defines a macro for every capability name (lines, columns, …), which
# would shadow ordinary names in term.c.
#
# This test refuses, in any other .c or .h file of ui/: an include of a curses or terminfo
# header, a call of a curses function, and a curses macro, type or constant (the list below),
# comments left out (the compiler's preprocessor strips them). It first plants one of each in
# a scratch file and fails if any goes unseen, so that it cannot pass by seeing nothing.
#
# usage: curses_owner.sh UI_DIR
set -u
ui=$1
cc=${CC:-cc}
owners="term.c termcap.c"

# Called with "(": the functions of curses and terminfo a file might reach for.
funcs='initscr|newterm|endwin|isendwin|getch|wgetch|ungetch|get_wch|wget_wch|timeout|wtimeout'
funcs="$funcs|nodelay|halfdelay|napms|refresh|wrefresh|doupdate|wnoutrefresh|erase|werase"
funcs="$funcs|clear|wclear|clearok|clrtoeol|wclrtoeol|clrtobot|move|wmove|addstr|waddstr"
funcs="$funcs|mvaddstr|mvwaddstr|addnstr|mvaddnstr|addch|waddch|mvaddch|addwstr|mvaddwstr"
funcs="$funcs|add_wch|printw|wprintw|mvprintw|mvwprintw|attron|attroff|attrset|wattron"
funcs="$funcs|wattroff|wattrset|attr_on|attr_off|color_set|curs_set|keypad|cbreak|nocbreak"
funcs="$funcs|noecho|echo|nonl|raw|noraw|def_prog_mode|reset_prog_mode|def_shell_mode"
funcs="$funcs|reset_shell_mode|savetty|resetty|getmaxyx|getyx|getbegyx|mousemask|getmouse"
funcs="$funcs|mouseinterval|has_colors|start_color|init_pair|init_color|use_default_colors"
funcs="$funcs|assume_default_colors|set_escdelay|hline|mvhline|whline|vline|mvvline|box"
funcs="$funcs|border|newwin|delwin|subwin|derwin|newpad|prefresh|beep|flash|leaveok|scrollok"
funcs="$funcs|idlok|bkgd|wbkgd|touchwin|setupterm|tigetstr|tigetflag|tigetnum|del_curterm"
# Named anywhere: curses' macros, types, globals and constants.
words='stdscr|curscr|LINES|COLS|COLORS|COLOR_PAIRS|COLOR_PAIR|ERR|OK|ESCDELAY|cur_term'
words="$words|attr_t|chtype|cchar_t|MEVENT|WINDOW|SCREEN|KEY_[A-Z0-9_]+|BUTTON[0-9]_[A-Z_]+"
words="$words|A_(NORMAL|BOLD|REVERSE|DIM|UNDERLINE|STANDOUT|BLINK|ITALIC|COLOR)"
words="$words|COLOR_(BLACK|RED|GREEN|YELLOW|BLUE|MAGENTA|CYAN|WHITE)"
includes='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](n?cursesw?\.h|ncursesw?/|term\.h>|terminfo)'

# Prints "FILE:LINE: what" for every use of curses in FILE; the status says whether any.
uses() {
  # Comments stripped, strings and line numbers kept (line markers off; -P would renumber).
  "$cc" -fpreprocessed -dD -E -x c "$1" 2>/dev/null |
    awk -v file="$1" -v inc="$includes" -v fn="$funcs" -v w="$words" '
      BEGIN { line = 0; found = 0 }
      /^# [0-9]+ "/ { line = $2 - 1; next }
      {
        line++
        if ($0 ~ inc) { print file ":" line ": includes curses: " $0; found = 1; next }
        if (match($0, "(^|[^A-Za-z0-9_])(" fn ")[[:space:]]*\\(")) {
          print file ":" line ": calls curses: " $0; found = 1; next
        }
        if (match($0, "(^|[^A-Za-z0-9_])(" w ")($|[^A-Za-z0-9_])")) {
          print file ":" line ": names curses: " $0; found = 1
        }
      }
      END { exit found ? 0 : 1 }'
}

# The check must be able to fail: each kind planted once, each must be seen.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf '#include <stdio.h>\n/* curs_set(1) in a comment is not a call */\n' >"$scratch/ok.c"
printf '#include <curses.h>\n' >"$scratch/inc.c"
printf 'void f(void)\n{\n    curs_set (1);\n}\n' >"$scratch/call.c"
printf 'int g(int c)\n{\n    return c == KEY_UP;\n}\n' >"$scratch/macro.c"
if uses "$scratch/ok.c" >/dev/null; then
  echo "curses_owner: the check saw curses in a file without it (the self-test failed)"
  exit 1
fi
for planted in inc call macro; do
  if ! uses "$scratch/$planted.c" >/dev/null; then
    echo "curses_owner: the check missed curses planted in $planted.c (the self-test failed)"
    exit 1
  fi
done

bad=0
checked=0
for f in "$ui"/*.c "$ui"/*.h; do
  [ -f "$f" ] || continue
  name=$(basename "$f")
  case " $owners " in *" $name "*) continue ;; esac
  checked=$((checked + 1))
  if uses "$f"; then bad=1; fi
done
if [ $checked -eq 0 ]; then
  echo "curses_owner: no source files in $ui"
  exit 1
fi
if [ $bad -ne 0 ]; then
  echo "curses_owner: only $owners may talk to curses; the others go through term.h"
  exit 1
fi
echo "curses_owner: $checked files in ui/ leave curses to $owners"
