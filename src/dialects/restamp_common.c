/*
 * restamp_common: the parts of a copy every dialect shares — the mode's name, the check of a new
 * body against its content type, and outgoing_free.
 */
#include "restamp.h"

#include <string.h>
#include <strings.h>

#include "util.h"

/* Whether a content type says JSON: it contains "json", in any case. */
static bool says_json(const struct bytes *ct)
{
    for (size_t i = 0; ct && i + 4 <= ct->len; i++)
        if (strncasecmp((const char *)ct->data + i, "json", 4) == 0)
            return true;
    return false;
}

static json_t *json_parse(const struct bytes *b, json_error_t *je)
{
    return json_loadb(b && b->len ? (const char *)b->data : "", b ? b->len : 0,
                      JSON_DECODE_ANY | JSON_ALLOW_NUL, je);
}

const char *restamp_mode_name(enum restamp_mode m)
{
    switch (m) {
    case RESTAMP_REPLAY:
        return "replay";
    case RESTAMP_REISSUE:
        return "reissue";
    case RESTAMP_MOVE:
        return "move";
    }
    return "?";
}

enum status restamp_check_body(const struct bytes *content_type, const struct bytes *body,
                               struct error *err)
{
    if (!says_json(content_type))
        return ST_OK;
    json_error_t je;
    json_t *j = json_parse(body, &je);
    if (!j)
        return error_set(err, ST_EPARSE,
                         "the body is not valid JSON, as its content type says it is: %s "
                         "(line %d, column %d)",
                         je.text, je.line, je.column);
    json_decref(j);
    return ST_OK;
}

void outgoing_free(struct outgoing *o)
{
    if (!o)
        return;
    bytes_free(&o->exchange);
    bytes_free(&o->routing_key);
#define X(name) bytes_free(&o->props.name);
    PROP_STRING_LIST(X)
#undef X
    htable_free(o->headers);
    bytes_free(&o->body);
    bytes_free(&o->id);
    bytes_free(&o->old_id);
    memset(o, 0, sizeof *o);
}
