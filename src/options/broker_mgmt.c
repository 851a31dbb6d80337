/*
 * broker_mgmt: what the broker options give beside the AMQP connection: the management API
 * client they name, what it knows of one queue, and the close names of a queue that is not
 * there.
 */
#include "broker_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgmt.h"
#include "peek.h"
#include "sanitize.h"
#include "suggest.h"
#include "util.h"

int broker_mgmt_exit(int e)
{
    return error_kind_exit(mgmt_error_kind((enum mgmt_error)e));
}

/* The management client for these broker options, or NULL (no URL, or --no-mgmt). */
struct mgmt *broker_mgmt(const struct broker_opts *b, int *exit_code)
{
    *exit_code = EXIT_OK;
    if (b->no_mgmt || !b->mgmt_url || !b->n_urls)
        return NULL;
    char *user = NULL;
    if (!conn_url_parts(b->urls[0], &user, NULL, NULL)) {
        *exit_code = EXIT_USAGE;
        return NULL;
    }
    struct mgmt_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.url = b->mgmt_url;
    cfg.user = user;
    /* The password file's or the prompt's; else the one the URL carries (it logged in as
     * "guest" then, and the API refused a login the AMQP connection made); else none. */
    char *url_pw = b->password ? NULL : conn_url_password(b->urls[0]);
    cfg.password = b->password ? b->password : url_pw ? url_pw : "";
    cfg.ca_file = b->cacert;
    cfg.client_cert = b->cert;
    cfg.client_key = b->key;
    cfg.insecure_no_verify_peer = b->tls_no_verify;
    cfg.insecure_no_verify_host = b->tls_no_verify;
    struct mgmt *m = NULL;
    struct error err;
    error_clear(&err);
    if (mgmt_open(&cfg, &m, &err) != ST_OK) {
        san_eprintf("dlqx: %s\n", err.msg);
        *exit_code = EXIT_USAGE;
    }
    free(user);
    conn_secret_free(url_pw);
    return m;
}

void broker_suggest_from(const struct mgmt_queue *qs, size_t nq, const char *vhost,
                         const char *want)
{
    const char **names = xcalloc(nq ? nq : 1, sizeof *names);
    size_t k = 0;
    for (size_t i = 0; i < nq; i++)
        if (!vhost || strcmp(qs[i].vhost, vhost) == 0)
            names[k++] = qs[i].name;
    size_t idx[3];
    size_t got = suggest_names(want, names, k, idx, 3);
    struct strbuf sb;
    sb_init(&sb);
    if (!got && !vhost) {
        sb_adds(&sb, "dlqx: no queue in any vhost has a name close to it (dlqx queues --all "
                     "--all-vhosts lists them)\n");
    } else if (!got) {
        sb_adds(&sb, "dlqx: no queue in virtual host \"");
        sanitize_append(&sb, vhost, strlen(vhost), 0);
        sb_adds(&sb, "\" has a name close to it (dlqx queues --all lists them)\n");
    } else {
        sb_adds(&sb, "dlqx: did you mean ");
        for (size_t i = 0; i < got; i++) {
            if (i)
                sb_adds(&sb, i + 1 == got ? " or " : ", ");
            sanitize_append(&sb, names[idx[i]], strlen(names[idx[i]]), 0);
        }
        sb_adds(&sb, "?\n");
    }
    fputs(sb.buf, stderr);
    sb_free(&sb);
    free(names);
}

void broker_suggest_queue(const struct broker_opts *b, const char *queue)
{
    int rc;
    struct mgmt *m = broker_mgmt(b, &rc);
    if (!m) {
        san_eprintf("dlqx: close names need the management API (--mgmt-url or "
                    "DLQX_MGMT_URL%s)\n",
                    b->no_mgmt ? ", without --no-mgmt" : "");
        return;
    }
    char *vhost = NULL;
    conn_url_parts(b->urls[0], NULL, &vhost, NULL);
    struct mgmt_queue *qs = NULL;
    size_t nq = 0;
    struct error err;
    error_clear(&err);
    if (vhost && mgmt_list_queues(m, vhost, &qs, &nq, &err) == ST_OK) {
        bool there = false; /* the listing lags: a queue just declared may be there */
        for (size_t i = 0; i < nq && !there; i++)
            there = strcmp(qs[i].name, queue) == 0;
        if (!there)
            broker_suggest_from(qs, nq, vhost, queue);
    } else if (err.msg[0])
        san_eprintf("dlqx: no close names: %s\n", err.msg);
    mgmt_queues_free(&qs, &nq);
    free(vhost);
    mgmt_close(&m);
}

/* What the management API knows of the queue: type, delivery limit (argument or policy),
 * whether it has a dead-letter exchange. Options given on the command line win. */
void broker_queue_info(const struct broker_opts *b, const char *queue, struct peek_queue_info *info,
                       bool type_given, bool limit_given, bool dlx_given)
{
    int rc;
    struct mgmt *m = broker_mgmt(b, &rc);
    if (!m) {
        san_eprintf("dlqx: no management API (--mgmt-url or DLQX_MGMT_URL): the queue's "
                    "type and delivery limit come from --type and --delivery-limit\n");
        return;
    }
    char *vhost = NULL;
    conn_url_parts(b->urls[0], NULL, &vhost, NULL);
    char *ev = mgmt_escape(vhost ? vhost : "/"), *eq = mgmt_escape(queue);
    char *path = xasprintf("/api/queues/%s/%s", ev, eq);
    long status = 0;
    json_t *resp = NULL;
    struct error err;
    error_clear(&err);
    if (mgmt_request(m, "GET", path, NULL, &status, &resp, &err) == ST_OK && status == 200 &&
        json_is_object(resp)) {
        json_t *arr = json_array();
        json_array_append(arr, resp);
        struct mgmt_queue *qs = NULL;
        size_t n = 0;
        if (mgmt_queues_from_json(arr, vhost, &qs, &n, &err) == ST_OK && n == 1) {
            if (!type_given)
                info->kind = qs[0].qtype == MGMT_QT_CLASSIC  ? QK_CLASSIC
                             : qs[0].qtype == MGMT_QT_QUORUM ? QK_QUORUM
                             : qs[0].qtype == MGMT_QT_STREAM ? QK_STREAM
                                                             : QK_UNKNOWN;
            if (!limit_given)
                info->delivery_limit = qs[0].delivery_limit;
            if (!dlx_given)
                info->has_dlx = qs[0].dead_letter_exchange != NULL;
        }
        mgmt_queues_free(&qs, &n);
        json_decref(arr);
    } else if (err.msg[0]) {
        san_eprintf("dlqx: the management API did not say what %s is (%s); going on without it\n",
                    queue, err.msg);
    }
    json_decref(resp);
    free(path);
    free(ev);
    free(eq);
    free(vhost);
    mgmt_close(&m);
}
