/*
 * cmd_ui: the interactive explorer as a command of dlqx (src/cli/main.c dispatches to it).
 * Nothing here is owned past the call.
 */
#ifndef DLQX_CMD_UI_H
#define DLQX_CMD_UI_H

#include <stdbool.h>

/* argv holds the arguments after the command; open_files: `dlqx open FILE...`. Returns the
 * exit status (EXIT_LIST, exitcodes.h). */
int cmd_ui(int argc, char **argv, bool open_files);

#endif
