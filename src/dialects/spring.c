/* spring: see spring.h. */
#include "spring.h"

#include <string.h>

/* ---- helpers (exported for the unit tests: spring.h) ---- */

bool spring_java_type(const unsigned char *s, size_t n)
{
    if (!n || n > SPRING_MAX_TYPE)
        return false;
    bool seg_start = true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '.') {
            if (seg_start)
                return false;
            seg_start = true;
            continue;
        }
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
                  c >= 0x80 || (c >= '0' && c <= '9' && !seg_start);
        if (!ok)
            return false;
        seg_start = false;
    }
    return !seg_start && utf8_valid(s, n);
}

/* The type of a `TYPE: MESSAGE` or `TYPE` line (Throwable.toString), and where the message
 * starts; false when the text before `: ` is not a class name. */
static bool throwable_line(const unsigned char *s, size_t n, struct spring_span *type,
                           struct spring_span *msg, bool *has_msg)
{
    size_t t = n;
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == ':' && s[i + 1] == ' ') {
            t = i;
            break;
        }
    if (!spring_java_type(s, t))
        return false;
    type->off = 0;
    type->len = t;
    *has_msg = t < n;
    msg->off = t < n ? t + 2 : n;
    msg->len = t < n ? n - t - 2 : 0;
    return true;
}

static void chain_add(struct spring_trace *tr, size_t off, size_t len)
{
    if (tr->ntypes < SPRING_MAX_CHAIN) {
        tr->types[tr->ntypes++] = (struct spring_span){off, len};
    } else {
        tr->elided++;
        tr->types[SPRING_MAX_CHAIN - 1] = (struct spring_span){off, len};
    }
}

void spring_trace_parse(const unsigned char *s, size_t n, struct spring_trace *out)
{
    static const char cause[] = "Caused by: ";
    const size_t clen = sizeof cause - 1;
    memset(out, 0, sizeof *out);
    if (!s || !n)
        return;
    out->truncated = s[n - 1] != '\n';
    enum { L_HEAD, L_FRAME, L_CAUSE, L_OTHER } prev = L_OTHER;
    size_t pos = 0;
    bool first = true;
    while (pos < n) {
        const unsigned char *nl = memchr(s + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - s) : n;
        size_t len = end - pos;
        if (len && s[pos + len - 1] == '\r')
            len--;
        const unsigned char *line = s + pos;
        struct spring_span ty, msg;
        bool has_msg;
        if (first) {
            first = false;
            prev = L_HEAD;
            if (throwable_line(line, len, &ty, &msg, &has_msg)) {
                chain_add(out, pos + ty.off, ty.len);
                out->has_root_message = has_msg;
                out->root_message = (struct spring_span){pos + msg.off, msg.len};
            }
        } else if (len >= clen && !memcmp(line, cause, clen) &&
                   (prev == L_FRAME || prev == L_CAUSE)) {
            prev = L_CAUSE;
            if (throwable_line(line + clen, len - clen, &ty, &msg, &has_msg)) {
                chain_add(out, pos + clen + ty.off, ty.len);
                out->has_root_message = has_msg;
                out->root_message = (struct spring_span){pos + clen + msg.off, msg.len};
            }
        } else if (len && line[0] == '\t') {
            prev = L_FRAME;
        } else {
            prev = L_OTHER;
        }
        pos = end + 1;
    }
}

bool spring_message_truncated(const struct bytes *msg, const struct bytes *trace)
{
    if (!msg || !trace || msg->len < 100 || trace->len < 100)
        return false;
    if (memcmp(msg->data + msg->len - 3, "...", 3))
        return false;
    /* the trace's copy: the first 97 bytes of the message, then "..." */
    const unsigned char *p = trace->data, *end = trace->data + trace->len;
    while ((size_t)(end - p) >= 100) {
        const unsigned char *hit = memchr(p, msg->data[0], (size_t)(end - p) - 99);
        if (!hit)
            return false;
        if (!memcmp(hit, msg->data, 97) && !memcmp(hit + 97, "...", 3))
            return true;
        p = hit + 1;
    }
    return false;
}

const struct bytes *spring_text(const struct hval *v)
{
    const struct bytes *b = v ? hval_str(v) : NULL;
    return b && utf8_valid(b->data, b->len) ? b : NULL;
}

bool spring_retry_count(const struct hval *v, int64_t *out)
{
    if (!v)
        return false;
    if (hkind_is_signed(v->kind)) {
        *out = v->v.i;
        return true;
    }
    if (hkind_is_unsigned(v->kind) && v->kind != HV_TIMESTAMP) {
        *out = v->v.u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v->v.u;
        return true;
    }
    return false;
}

bool spring_scs_dlq(const struct bytes *dlq, const struct bytes *orig_exchange,
                    struct spring_span *consumer_queue, struct spring_span *group)
{
    static const char suffix[] = ".dlq";
    if (!dlq || !orig_exchange || !orig_exchange->len || dlq->len < 4)
        return false;
    size_t q = dlq->len - 4;
    if (memcmp(dlq->data + q, suffix, 4))
        return false;
    size_t e = orig_exchange->len;
    if (q < e + 2 || memcmp(dlq->data, orig_exchange->data, e) || dlq->data[e] != '.')
        return false;
    *consumer_queue = (struct spring_span){0, q};
    *group = (struct spring_span){e + 1, q - e - 1};
    return true;
}
