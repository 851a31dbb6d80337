/* traceparent: see traceparent.h. */
#include "traceparent.h"

#include <string.h>

static bool lower_hex(const unsigned char *p, size_t n, bool *all_zero)
{
    bool zero = true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
        if (c != '0')
            zero = false;
    }
    if (all_zero)
        *all_zero = zero;
    return true;
}

bool traceparent_trace_id(const void *data, size_t n, char out[TRACEPARENT_ID_LEN + 1])
{
    const unsigned char *s = data;
    /* 2 version, '-', 32 trace id, '-', 16 parent id, '-', 2 flags = 55 */
    if (!s || n < 55)
        return false;
    bool zero;
    if (!lower_hex(s, 2, NULL) || (s[0] == 'f' && s[1] == 'f'))
        return false;
    if (s[2] != '-' || s[35] != '-' || s[52] != '-')
        return false;
    if (!lower_hex(s + 3, 32, &zero) || zero)
        return false;
    if (!lower_hex(s + 36, 16, &zero) || zero)
        return false;
    if (!lower_hex(s + 53, 2, NULL))
        return false;
    bool v00 = s[0] == '0' && s[1] == '0';
    if (n > 55 && (v00 || s[55] != '-'))
        return false;
    memcpy(out, s + 3, TRACEPARENT_ID_LEN);
    out[TRACEPARENT_ID_LEN] = '\0';
    return true;
}

bool traceparent_from_hval(const struct hval *v, char out[TRACEPARENT_ID_LEN + 1])
{
    const struct bytes *b = v ? hval_str(v) : NULL;
    return b && traceparent_trace_id(b->data, b->len, out);
}
