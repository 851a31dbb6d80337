/*
 * main: dlqx's command line — dispatch to the subcommands, usage, version.
 */
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "peek_input.h"
#include "cmd_ui.h"
#include "util.h"

static const char usage[] =
    "usage: dlqx [BROKER OPTIONS] [QUEUE...]     the explorer: the broker's DLQs, or those queues\n"
    "       dlqx open FILE...                    the explorer on snapshot files (no broker)\n"
    "       dlqx COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "Read dead letters from a live RabbitMQ queue or from snapshot files (JSON Lines; see\n"
    "dlqx(1) and docs/snapshot-format.md).\n"
    "\n"
    "commands:\n"
    "  decode [--format json|table] [--filter EXPR] [FILE...|-]\n"
    "                                             decode every message: one JSON object per line\n"
    "  tree [--json] [--ascii] [--of ID] [--filter EXPR] [FILE...|-]\n"
    "                                             the causal forest by correlation and causation\n"
    "  groups [--json] [--filter EXPR] [FILE...|-|QUEUE]\n"
    "                                             the failure groups (fingerprint and type),\n"
    "                                             their keys for --group, first/last and rate\n"
    "  report [--format markdown|html] [-o FILE] [FILE...|-|QUEUE]\n"
    "                                             the incident summary: per queue and cause,\n"
    "                                             rate now, timeline, what was replayed\n"
    "  cat [FILE...|-]                            rewrite records in the canonical snapshot form\n"
    "  queues [--json] [--all] [QUEUE...]         the dead-letter queues of a broker, their "
    "sources\n"
    "  peek QUEUE [--limit N] [-o FILE]           snapshot a live queue; it keeps every message,\n"
    "                                             in order (see dlqx peek --help)\n"
    "  follow QUEUE... [--json] [--filter EXPR]   new dead letters as they arrive, decoded, via\n"
    "                                             a tap queue of dlqx's own (the DLQ untouched)\n"
    "  replay QUEUE (--id ID|--filter EXPR|--group KEY|--all) [--with F=V]... [--reissue]\n"
    "         [--to EXCHANGE:ROUTING_KEY] [--snapshot FILE] [--dry-run] [--rate N] [--canary]\n"
    "         [--yes]                             send dead letters back: confirmed by the broker\n"
    "                                             before the dead letter is removed, journaled\n"
    "  move QUEUE [--to-queue Q] (selection)      move dead letters as they are (to QUEUE.parked)\n"
    "  delete QUEUE (selection)                   remove dead letters (journaled)\n"
    "  (replay, move, delete: --attempts N)       a lost node: carry on from the next URL\n"
    "  journal [--pending] [--json] [--run ID]    what dlqx wrote to brokers; --pending: the\n"
    "                                             copies that may have been sent twice\n"
    "  help                                       this text\n"
    "  version                                    the version\n"
    "\n"
    "environment:\n"
    "  DLQX_URL             amqp://user@host:port/vhost (comma-separated for cluster nodes)\n"
    "  DLQX_PASSWORD_FILE   the password (never on the command line)\n"
    "  DLQX_MGMT_URL        the management API, http://host:15672/ (a cluster: every\n"
    "                       node's, comma-separated)\n"
    "  DLQX_READ_ONLY=1     refuse every write (also --read-only, ?read_only=true on a URL)\n"
    "  DLQX_NODE_ORDER      given or shuffle: the order the nodes are tried in (--node-order)\n"
    "  DLQX_HEARTBEAT       seconds between heartbeats, 1-600, default 5 (--heartbeat)\n"
    "  DLQX_JOURNAL         the journal file (default ~/.local/state/dlqx/journal.jsonl)\n"
    "  DLQX_NOW             fix the clock (epoch milliseconds) for ages, as tests do\n"
    "  DLQX_MAX_RECORD      the record size limit of snapshot files (default 64M; also\n"
    "                       --max-record-size on decode, tree, cat and open)\n"
    "\n"
    "exit codes: 0 ok, 1 no such message (tree --of), 2 usage, 65 some records malformed\n"
    "            (skipped), 66 input missing, 71 out of memory, 74 I/O error; broker: 10\n"
    "            unreachable, 11 login refused, 12 vhost, 13 TLS, 14 access refused, 15 no such\n"
    "            queue, 16 peek stopped at the delivery limit, 17 connection lost, 18 snapshot\n"
    "            incomplete, 19 protocol;\n"
    "            writes: 20 some kept, 21 some outcomes unknown (see dlqx journal --pending),\n"
    "            22 the canary came back, 23 read-only, 24 declined at the confirmation\n";

/* jansson allocates through xmalloc: out of memory in a parser is exit 71 with its message,
 * never a NULL down a path that crashes (json_loadb did, on a 300 MB record). */
static void *json_xmalloc(size_t n)
{
    return xmalloc(n);
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    json_set_alloc_funcs(json_xmalloc, free);
    /* A closed pipe (dlqx decode | head) is a write error, not a signal death. */
    signal(SIGPIPE, SIG_IGN);
    cli_peek_self(argv[0]);
    if (argc < 2)
        return cmd_ui(0, argv + 1, false);
    const char *cmd = argv[1];
    if (strcmp(cmd, "open") == 0)
        return cmd_ui(argc - 2, argv + 2, true);
    if (strcmp(cmd, "decode") == 0)
        return cmd_decode(argc - 1, argv + 1);
    if (strcmp(cmd, "tree") == 0)
        return cmd_tree(argc - 1, argv + 1);
    if (strcmp(cmd, "groups") == 0)
        return cmd_groups(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(cmd, "cat") == 0)
        return cmd_cat(argc - 1, argv + 1);
    if (strcmp(cmd, "peek") == 0)
        return cmd_peek(argc - 1, argv + 1);
    if (strcmp(cmd, "follow") == 0)
        return cmd_follow(argc - 1, argv + 1);
    if (strcmp(cmd, "queues") == 0)
        return cmd_queues(argc - 1, argv + 1);
    if (strcmp(cmd, "journal") == 0)
        return cmd_journal(argc - 1, argv + 1);
    if (strcmp(cmd, "replay") == 0)
        return cmd_replay(argc - 1, argv + 1);
    if (strcmp(cmd, "move") == 0)
        return cmd_move(argc - 1, argv + 1);
    if (strcmp(cmd, "delete") == 0)
        return cmd_delete(argc - 1, argv + 1);
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage, stdout);
        return cli_flush_stdout() ? EXIT_OK : EXIT_IOERR;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("dlqx %s\n", DLQX_VERSION_STRING);
        return cli_flush_stdout() ? EXIT_OK : EXIT_IOERR;
    }
    /* Anything else is the explorer on a broker: options, or queue names. */
    return cmd_ui(argc - 1, argv + 1, false);
}
