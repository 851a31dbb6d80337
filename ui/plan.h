/*
 * plan: the view that shows what a write will do before it is done, runs it with a progress
 * bar, and shows how it ended (ui/view_plan.c). The lists and the groups open it on the
 * dead letters they show.
 */
#ifndef DLQX_UI_PLAN_H
#define DLQX_UI_PLAN_H

#include <stddef.h>

#include "actions.h"

struct app;

enum plan_op { PLAN_REPLAY, PLAN_REISSUE, PLAN_MOVE, PLAN_DELETE };

/* Opens the plan of op on store entries (copied); scope names them for the title ("this
 * message", "group …"). alt/n_alt/alt_scope (may be NULL/0) is the other set `a` switches to
 * (every message shown). Says why on the status line when it cannot (read-only, no broker,
 * entries from several queues). */
void plan_open(struct app *a, enum plan_op op, const size_t *entries, size_t n,
               const char *scope, const size_t *alt, size_t n_alt, const char *alt_scope);
/* R I M D where a view has a message under the cursor: that message, or every row shown. */
int plan_request(struct app *a, enum action act);

extern const struct view_ops view_plan_ops;

#endif
