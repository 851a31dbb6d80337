/*
 * plan_model: what a replay, re-issue, move or delete will do, as lines of text — the counts
 * and targets over every dead letter of the plan, the side-by-side diff of the copy shown,
 * the edits, the pace — and how its pass ended. Pure: no curses, no broker (whether a target
 * routes is asked by the caller through a hook), so that tests/test_plan_model.c reads what
 * a person will read. The plan view (view_plan.c) draws the lines and runs the pass.
 *
 * Ownership: plan_model_new returns a plan the caller frees with plan_model_free; it copies
 * the entries and the texts it is given, and owns its lines (sanitised text, safe to draw).
 */
#ifndef DLQX_UI_PLAN_MODEL_H
#define DLQX_UI_PLAN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "plan.h"
#include "restamp.h"
#include "store.h"
#include "ui.h"

#define PLAN_MAX_CHANGES 32
#define PLAN_TARGETS 6

struct pline {
    char *text; /* safe */
    enum ui_attr attr;
};

struct plan_state {
    enum plan_op op;
    enum restamp_mode mode;
    char *queue;
    size_t *entries;
    size_t n;
    char *scope; /* "this message", "the 1,234 shown", "group …" */
    size_t *alt; /* the other set (ACT_SCOPE), with its name; NULL: none */
    size_t n_alt;
    char *alt_scope;
    size_t at; /* the copy shown */
    /* edits */
    char *with_text;
    struct env_change changes[PLAN_MAX_CHANGES];
    struct hval vals[PLAN_MAX_CHANGES];
    size_t n_changes;
    struct bytes body;
    bool has_body;
    char *to_exchange, *to_routing_key;
    bool canary;
    struct plan_pace pace; /* P */
    bool pending_warned;   /* the journal's pending intents were said (plan_pending_check) */
    /* the plan */
    uint64_t sendable, kept;
    char kept_why[240];
    struct {
        char *exchange, *routing_key;
        uint64_t n;
        char route[300]; /* "not checked" until the route hook says */
    } targets[PLAN_TARGETS];
    size_t n_targets;
    struct pline *lines;
    size_t n_lines, cap_lines;
    /* the pass */
    bool ran;
    struct replay_report rep;
    double started;
};

/* "replay", "re-issue", "move", "delete". */
const char *plan_op_name(enum plan_op op);

/* A plan of op on the store entries of one queue (copied; n > 0), named by scope, with the
 * other set `a` switches to (alt may be NULL). A move goes to the parking queue beside the
 * DLQ (orders.dlq → orders.parked). No lines until plan_model_build. */
struct plan_state *plan_model_new(enum plan_op op, const char *queue, const size_t *entries,
                                  size_t n, const char *scope, const size_t *alt, size_t n_alt,
                                  const char *alt_scope);
void plan_model_free(struct plan_state *s);

/* Asked between counting and writing the lines: fills s->targets[i].route ("routes …", or
 * why not) for each target. NULL: the routes stay "not checked". */
typedef void (*plan_route_fn)(struct plan_state *s, void *ctx);
/* The plan made again from the store: counts and targets over every entry, the diff of the
 * copy shown (s->at), the lines. san_flags: the screen's sanitizer flags (SAN_ASCII). */
void plan_model_build(struct plan_state *s, struct store *store, unsigned san_flags,
                      plan_route_fn routes, void *ctx);
/* The lines of a pass that ran (s->rep): how it ended, and how many dead letters it took out
 * of the list. */
void plan_model_summary(struct plan_state *s, size_t gone);

/* The copy of one dead letter under the plan's edits, or why there is none. */
enum status plan_model_copy(const struct plan_state *s, const struct decoded *d,
                            struct outgoing *out, struct error *err);

/* Edits; each is followed by plan_model_build. */
/* "type=x header.a=b -header.c": each word a change; false (err said, no change kept) for a
 * word that is not one. (A move or a delete sends the message as it is: the view does not
 * offer them edits.) */
bool plan_model_set_changes(struct plan_state *s, const char *text, struct error *err);
/* "EXCHANGE:ROUTING_KEY" (":queue" for a queue), or "" for the dialect's own; false (err
 * said, and the dialect's own target) for anything else. */
bool plan_model_set_target(struct plan_state *s, const char *text, struct error *err);
/* R or I on a replay or re-issue: the other one (false for a move or delete). */
bool plan_model_toggle_reissue(struct plan_state *s);
/* a: the other set of messages (false when there is none). */
bool plan_model_swap_scope(struct plan_state *s);

#endif
