/*
 * msort: the explorer's stable merge sort in slices (msort.h).
 */
#include "msort.h"

#include <string.h>

#include "job.h"

static const unsigned char *text_of(const struct msort *m, uint32_t pos, int which)
{
    if (!m->ids)
        return (const unsigned char *)m->texts + m->off[pos];
    store_ref r = store_entry_at(m->ids, pos)->id;
    size_t len;
    const unsigned char *p = store_text_view(m->ids, r, &len);
    if (p)
        return p;
    store_text(m->ids, r, m->ubuf[which]); /* a UUID kept in 16 bytes */
    return (const unsigned char *)m->ubuf[which];
}

static int ritem_cmp(const struct msort *m, const struct ritem *x, const struct ritem *y)
{
    int c = 0;
    if (x->key != y->key) {
        c = x->key < y->key ? -1 : 1;
    } else if (m->texts || m->ids) {
        size_t n = x->len < y->len ? x->len : y->len;
        if (n > 8)
            c = memcmp(text_of(m, x->pos, 0) + 8, text_of(m, y->pos, 1) + 8, n - 8);
        if (!c && x->len != y->len) /* keys pad a short text with NULs: "a" and "a\0" tie */
            c = x->len < y->len ? -1 : 1;
    }
    if (c)
        return m->desc ? -c : c;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

bool msort_step(struct msort *m, double until)
{
    unsigned tick = 0;
    while (m->width < m->n) {
        while (m->lo < m->n) {
            size_t mid = m->lo + m->width < m->n ? m->lo + m->width : m->n;
            size_t hi = m->lo + 2 * m->width < m->n ? m->lo + 2 * m->width : m->n;
            if (!m->merging) {
                m->i = m->lo;
                m->j = mid;
                m->o = m->lo;
                m->merging = true;
            }
            while (m->i < mid && m->j < hi) {
                if (++tick % 4096 == 0 && job_yield(until))
                    return false;
                if (ritem_cmp(m, &m->a[m->j], &m->a[m->i]) < 0)
                    m->b[m->o++] = m->a[m->j++];
                else
                    m->b[m->o++] = m->a[m->i++];
            }
            memcpy(m->b + m->o, m->a + m->i, (mid - m->i) * sizeof *m->a);
            m->o += mid - m->i;
            memcpy(m->b + m->o, m->a + m->j, (hi - m->j) * sizeof *m->a);
            m->merging = false;
            m->lo = hi;
        }
        struct ritem *t = m->a;
        m->a = m->b;
        m->b = t;
        m->width *= 2;
        m->lo = 0;
    }
    return true;
}

void msort_init(struct msort *m, struct ritem *items, struct ritem *tmp, size_t n)
{
    memset(m, 0, sizeof *m);
    m->a = items;
    m->b = tmp;
    m->n = n;
    m->width = 1;
}
