/*
 * restamp_headers: the kind of a header edit. `--with header.NAME=V` without a kind on a
 * header the dead letter has keeps that header's kind — an int32 1 edited to 2 is the int32
 * 2, range-checked — where it used to turn into the string "2" without a word, and a consumer
 * reading an int32 would then fail on the copy. A value that does not read as that kind is
 * refused, naming the kind and the typed form that changes it (header.NAME:string=V). A new
 * header without a kind is a string, as before. Called by restamp_build (restamp.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "restamp.h"

/* The value an untyped edit gives a header that is old; *out untouched when it keeps the
 * string the edit was parsed as (old is a string). */
static enum status retyped(const char *name, const struct hval *old, const struct hval *text,
                           struct hval *out, struct error *err)
{
    if (old->kind == HV_STRING)
        return ST_OK;
    char *val = xstrndup(text->v.s.data ? (const char *)text->v.s.data : "", text->v.s.len);
    enum status st = ST_OK;
    if (old->kind == HV_BYTES) {
        *out = hval_bytes(val, strlen(val));
    } else {
        struct error why;
        st = env_change_value(old->kind, name, val, out, &why);
        if (st == ST_EINVAL)
            error_set(err, ST_EINVAL,
                      "header.%.100s is %s in the dead letter, and \"%.60s\" does not read as "
                      "%s (an edit keeps the header's kind; to change it, give the kind: "
                      "header.%.100s:string=%.60s)",
                      name, hkind_name(old->kind), val, hkind_name(old->kind), name, val);
        else if (st != ST_OK)
            error_set(err, ST_EINVAL,
                      "header.%.100s is %s in the dead letter, which an edit cannot give (an "
                      "edit keeps the header's kind; to replace it, give a kind: "
                      "header.%.100s:string=%.60s)",
                      name, hkind_name(old->kind), name, val);
        if (st != ST_OK)
            st = ST_EINVAL;
    }
    free(val);
    return st;
}

enum status restamp_header_kinds(const struct message *m, const struct env_change *in, size_t n,
                                 struct env_change **out, struct hval **vals, struct error *err)
{
    *out = NULL;
    *vals = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct env_change *c = &in[i];
        if (c->field != EF_HEADER_SET || !c->untyped || !c->header || !c->value ||
            c->value->kind != HV_STRING)
            continue;
        const struct hval *old = htable_get(m->headers, c->header);
        if (!old)
            continue; /* a new header: a string */
        if (!*out) {
            *out = xmalloc(n * sizeof **out);
            memcpy(*out, in, n * sizeof **out);
            *vals = xcalloc(n, sizeof **vals);
            for (size_t k = 0; k < n; k++)
                (*vals)[k] = hval_void();
        }
        struct hval v = hval_void();
        if (retyped(c->header, old, c->value, &v, err) != ST_OK) {
            restamp_header_kinds_free(*out, *vals, n);
            *out = NULL;
            *vals = NULL;
            return ST_EINVAL;
        }
        if (v.kind != HV_VOID) {
            (*vals)[i] = v;
            (*out)[i].value = &(*vals)[i];
        }
    }
    return ST_OK;
}

void restamp_header_kinds_free(struct env_change *changes, struct hval *vals, size_t n)
{
    for (size_t i = 0; vals && i < n; i++)
        hval_free(&vals[i]);
    free(vals);
    free(changes);
}
