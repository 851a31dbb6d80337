#include "groups_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void append(struct store *s, const struct dl *d, size_t i)
{
    struct message m;
    message_init(&m);
    m.queue = bytes_from_cstr(d->queue);
    m.fetched_at_ms = T0 + (int64_t)i;
    m.headers_present = true;
    char id[64];
    snprintf(id, sizeof id, "m-%zu", i);
    if (d->error) {
        htable_add(m.headers, "x-acemq-id", hval_cstring(id));
        htable_add(m.headers, "x-acemq-type", hval_cstring(d->type));
        htable_add(m.headers, "x-acemq-first-seen", hval_int(HV_I64, d->first_seen));
        htable_add(m.headers, "x-acemq-error", hval_cstring(d->error));
    } else {
        props_set_string(&m.props, PROP_message_id, id, strlen(id));
        props_set_string(&m.props, PROP_type, d->type, strlen(d->type));
        m.props.present |= 1u << PROP_timestamp;
        m.props.timestamp = (uint64_t)(d->first_seen / 1000);
        struct hval death = hval_table();
        htable_add(death.v.tab, "count", hval_int(HV_I64, 1));
        htable_add(death.v.tab, "queue", hval_cstring(d->from));
        htable_add(death.v.tab, "reason", hval_cstring(d->reason));
        struct hval arr = hval_array();
        harray_add(&arr.v.arr, death);
        htable_add(m.headers, "x-death", arr);
    }
    struct error err;
    assert_int_equal(store_append(s, &m, T0, &err), ST_OK);
    message_free(&m);
}

void assert_same_groups(const struct groups *x, const struct groups *y, size_t entries)
{
    assert_int_equal(groups_count(x), groups_count(y));
    assert_int_equal(groups_total(x), groups_total(y));
    for (size_t k = 0; k < groups_count(x); k++) {
        const struct group *a = groups_at(x, k), *b = groups_at(y, k);
        assert_string_equal(a->key, b->key);
        assert_string_equal(a->type, b->type);
        assert_string_equal(a->exception, b->exception);
        assert_int_equal(a->fingerprint, b->fingerprint);
        assert_int_equal(a->count, b->count);
        assert_int_equal(a->first_ms, b->first_ms);
        assert_int_equal(a->last_ms, b->last_ms);
        assert_int_equal(a->example, b->example);
        assert_int_equal(a->n_queues, b->n_queues);
        for (size_t q = 0; q < a->n_queues; q++) {
            assert_int_equal(a->queues[q].queue, b->queues[q].queue);
            assert_int_equal(a->queues[q].count, b->queues[q].count);
        }
        for (uint32_t j = 0; j < a->count; j++)
            assert_int_equal(a->members[j], b->members[j]);
    }
    for (size_t i = 0; i < entries; i++)
        assert_int_equal(groups_of_entry(x, i), groups_of_entry(y, i));
}
