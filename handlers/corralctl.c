/* corralctl: the operator's CLI. Talks to Redis with corral.conf, the same
 * state corral-api serves, so it works while the API is down.
 *
 *   corralctl [-c conf] [--json] workspace create NAME
 *   corralctl [-c conf] [--json] key create --workspace ID --role owner|member
 *   corralctl [-c conf] [--json] join-token create [--workspace ID] [--ttl SECONDS]
 *   corralctl [-c conf] [--json] join-token revoke TOKEN_ID
 *   corralctl [-c conf] audit [--workspace ID] [--limit N] [--cursor NEXT]
 *   corralctl [-c conf] registry-gc [--wait SECONDS]
 *   corralctl [-c conf] [--json] workers [--workspace ID]
 *
 * What it mints or revokes is in the audit trail with actor "operator"; audit
 * prints a page of a workspace's trail, or of the operator's (the unscoped
 * fleet's workers) without --workspace (decision 0045). registry-gc deletes
 * the registry's manifests no template keeps and, on the registry's host,
 * frees the blobs they held (decision 0081; ctl_registry_gc.c). workers lists
 * a pool's workers (the unscoped fleet's without --workspace) as GET
 * /v1/workers shows a workspace its own: capacity, health, warm pools.
 */
#include "accounts.h"
#include "audit.h"
#include "audit_view.h"
#include "corral_conf.h"
#include "ctl_registry_gc.h"
#include "log.h"
#include "worker_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cli {
    struct rconn rc;
    struct corral_conf conf;
    int json;
    const char *workspace, *role, *ttl, *limit, *cursor, *wait;
};

static int usage(void)
{
    fprintf(stderr, "usage: corralctl [-c corral.conf] [--json] COMMAND\n"
                    "  workspace create NAME\n"
                    "  key create --workspace ID --role owner|member\n"
                    "  join-token create [--workspace ID] [--ttl SECONDS]\n"
                    "  join-token revoke TOKEN_ID\n"
                    "  audit [--workspace ID] [--limit 1-1000] [--cursor NEXT]\n"
                    "  registry-gc [--wait SECONDS (330)]\n"
                    "  workers [--workspace ID]\n");
    return 2;
}

static int fail(const char *what)
{
    fprintf(stderr, "corralctl: %s\n", what);
    return 1;
}

static int need_workspace(struct cli *c, const char *ws)
{
    int e;

    if (!token_is_id(ws))
        return fail("--workspace: not a workspace id");
    e = workspace_exists(&c->rc, ws);
    if (e < 0)
        return fail("redis unreachable");
    return e ? 0 : fail("--workspace: no such workspace");
}

/* A credential the operator minted or revoked, in its workspace's trail. */
static void audit_op(struct cli *c, const char *ws, const char *event, const char *id,
                     const char *reason)
{
    struct audit_event e = {
        .event = event, .actor = AUDIT_ACTOR_OPERATOR, .credential = id, .reason = reason};

    audit_append(&c->rc, ws, &e);
}

static int cmd_workspace_create(struct cli *c, const char *name)
{
    char ws[TOKEN_WS_MAX], id[TOKEN_ID_MAX], key[TOKEN_TEXT_MAX];

    if (!name || !*name || strlen(name) > 128)
        return fail("workspace create: NAME of 1-128 characters required");
    if (workspace_create(&c->rc, name, ws) != 0 ||
        apikey_create(&c->rc, c->conf.server_secret, ws, ROLE_OWNER, id, key) != 0)
        return fail("redis unreachable");
    audit_op(c, ws, AUDIT_KEY_MINTED, id, role_name(ROLE_OWNER));
    if (c->json)
        printf("{\"workspace\":\"%s\",\"key_id\":\"%s\",\"owner_key\":\"%s\"}\n", ws, id, key);
    else
        printf("workspace %s\nowner key %s (id %s): shown once, store it now\n", ws, key, id);
    return 0;
}

static int cmd_key_create(struct cli *c)
{
    char id[TOKEN_ID_MAX], key[TOKEN_TEXT_MAX];
    enum role role = role_parse(c->role);

    if (!c->workspace || role == ROLE_NONE)
        return fail("key create: --workspace ID and --role owner|member required");
    if (need_workspace(c, c->workspace) != 0)
        return 1;
    if (apikey_create(&c->rc, c->conf.server_secret, c->workspace, role, id, key) != 0)
        return fail("redis unreachable");
    audit_op(c, c->workspace, AUDIT_KEY_MINTED, id, role_name(role));
    if (c->json)
        printf("{\"id\":\"%s\",\"key\":\"%s\",\"role\":\"%s\",\"workspace\":\"%s\"}\n", id, key,
               role_name(role), c->workspace);
    else
        printf("key %s (id %s, %s of %s): shown once\n", key, id, role_name(role), c->workspace);
    return 0;
}

static int cmd_join_create(struct cli *c)
{
    char id[TOKEN_ID_MAX], tok[TOKEN_TEXT_MAX];
    const char *ws = c->workspace ? c->workspace : "";
    long ttl = c->ttl ? atol(c->ttl) : 3600;
    int64_t expires;

    if (ttl < 1 || ttl > 365L * 86400)
        return fail("--ttl: seconds in [1, 31536000]");
    if (*ws && need_workspace(c, ws) != 0)
        return 1;
    if (jointoken_create(&c->rc, c->conf.server_secret, ws, ttl, id, tok, &expires) != 0)
        return fail("redis unreachable");
    audit_op(c, ws, AUDIT_JOIN_TOKEN_MINTED, id, NULL);
    if (c->json)
        printf("{\"id\":\"%s\",\"token\":\"%s\",\"workspace\":\"%s\",\"expires_at_ms\":%lld}\n", id,
               tok, ws, (long long)expires);
    else
        printf("join token %s (id %s, %s, expires in %ld s): shown once\n", tok, id,
               *ws ? ws : "unscoped fleet", ttl);
    return 0;
}

static int cmd_join_revoke(struct cli *c, const char *id)
{
    char ws[TOKEN_WS_MAX];
    int n;

    if (!id || !token_is_id(id))
        return fail("join-token revoke: TOKEN_ID required");
    n = jointoken_workspace(&c->rc, id, ws);
    if (n == 1)
        n = jointoken_revoke(&c->rc, ws, id);
    if (n < 0)
        return fail("redis unreachable");
    if (n == 0)
        return fail("no such join token");
    audit_op(c, ws, AUDIT_JOIN_TOKEN_REVOKED, id, NULL);
    printf(c->json ? "{\"revoked\":\"%s\"}\n" : "revoked %s\n", id);
    return 0;
}

/* Prints one page as GET /v1/audit answers it, JSON in either mode. */
static int cmd_audit(struct cli *c)
{
    struct audit_query q = {.limit = c->limit ? atoi(c->limit) : 100};
    struct audit_page page;
    unsigned long long ms, seq;
    const char *ws = c->workspace ? c->workspace : "";
    json_t *view;

    if (q.limit < 1 || q.limit > 1000)
        return fail("--limit: an integer in [1, 1000]");
    if (c->cursor &&
        (audit_id_parse(c->cursor, &ms, &seq) != 0 || strlen(c->cursor) >= sizeof(q.after)))
        return fail("--cursor: the \"next\" of a previous page");
    snprintf(q.after, sizeof(q.after), "%s", c->cursor ? c->cursor : "");
    if (*ws && need_workspace(c, ws) != 0)
        return 1;
    if (audit_read(&c->rc, ws, &q, &page) != 0)
        return fail("redis unreachable");
    view = audit_page_view(&page);
    audit_page_free(&page);
    if (!view || json_dumpf(view, stdout, JSON_COMPACT) != 0)
        return fail("out of memory");
    json_decref(view);
    putchar('\n');
    return 0;
}

/* One worker as a line: id, host, state, slots, and each warm pool as
 * template:runtime ready/size. */
static void print_worker(json_t *v)
{
    json_t *p;
    size_t i;

    printf("%s %s %s slots %lld/%lld%s", json_string_value(json_object_get(v, "worker_id")),
           json_string_value(json_object_get(v, "hostname")),
           json_string_value(json_object_get(v, "state")),
           (long long)json_integer_value(json_object_get(v, "used_slots")),
           (long long)json_integer_value(json_object_get(v, "slots")),
           json_is_true(json_object_get(v, "healthy")) ? "" : " unhealthy");
    json_array_foreach(json_object_get(v, "warm_pools"), i, p)
    {
        printf(" warm %s:%s %lld/%lld", json_string_value(json_object_get(p, "template")),
               json_string_value(json_object_get(p, "runtime")),
               (long long)json_integer_value(json_object_get(p, "ready")),
               (long long)json_integer_value(json_object_get(p, "size")));
    }
    putchar('\n');
}

static int cmd_workers(struct cli *c)
{
    const char *ws = c->workspace ? c->workspace : "";
    struct worker_list l;
    json_t *list;

    if (*ws && need_workspace(c, ws) != 0)
        return 1;
    list = json_array();
    if (!list || worker_list(&c->rc, ws, WORKERS_ALL, &l) != 0) {
        json_decref(list);
        return fail("redis unreachable");
    }
    for (size_t i = 0; i < l.n; i++)
        json_array_append_new(list, worker_view(&l.w[i]));
    worker_list_free(&l);
    if (c->json) {
        json_dumpf(list, stdout, JSON_COMPACT);
        putchar('\n');
    }
    for (size_t i = 0; !c->json && i < json_array_size(list); i++)
        print_worker(json_array_get(list, i));
    json_decref(list);
    return 0;
}

/* A push token lives 300 s: the default wait outlasts one. */
static int cmd_registry_gc(struct cli *c)
{
    long wait = c->wait ? strtol(c->wait, NULL, 10) : 330;

    if (wait < 0 || wait > 3600)
        return fail("--wait: seconds in [0, 3600]");
    if (!c->conf.registry[0])
        return fail("corral.conf names no registry");
    return ctl_registry_gc(&c->rc, &c->conf, wait);
}

/* Splits options from positional words; positional[] gets the rest. */
static int parse(struct cli *c, int argc, char **argv, const char **conf, const char **pos,
                 int *npos)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "-c")            ? conf
                            : !strcmp(a, "--workspace") ? &c->workspace
                            : !strcmp(a, "--role")      ? &c->role
                            : !strcmp(a, "--ttl")       ? &c->ttl
                            : !strcmp(a, "--limit")     ? &c->limit
                            : !strcmp(a, "--cursor")    ? &c->cursor
                            : !strcmp(a, "--wait")      ? &c->wait
                                                        : NULL;
        if (!strcmp(a, "--json"))
            c->json = 1;
        else if (slot && i + 1 < argc)
            *slot = argv[++i];
        else if (slot || (a[0] == '-' && a[1]) || *npos >= 4)
            return -1;
        else
            pos[(*npos)++] = a;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static struct cli c;
    const char *conf = getenv("CORRAL_CONF") ? getenv("CORRAL_CONF") : "/etc/corral/corral.conf";
    const char *pos[4] = {0};
    char err[512];
    int npos = 0;

    log_set_name("corralctl");
    if (parse(&c, argc, argv, &conf, pos, &npos) != 0 || npos < 1)
        return usage();
    if (corral_conf_load(conf, &c.conf, err, sizeof(err)) != 0) {
        fprintf(stderr, "corralctl: config: %s\n", err);
        return 1;
    }
    corral_conf_rconn(&c.conf, &c.rc);
    audit_set_retention(c.conf.audit_retention_s);
    if (!strcmp(pos[0], "audit"))
        return npos == 1 ? cmd_audit(&c) : usage();
    if (!strcmp(pos[0], "registry-gc"))
        return npos == 1 ? cmd_registry_gc(&c) : usage();
    if (!strcmp(pos[0], "workers"))
        return npos == 1 ? cmd_workers(&c) : usage();
    if (npos < 2)
        return usage();
    if (!strcmp(pos[0], "workspace") && !strcmp(pos[1], "create"))
        return cmd_workspace_create(&c, pos[2]);
    if (!strcmp(pos[0], "key") && !strcmp(pos[1], "create"))
        return cmd_key_create(&c);
    if (!strcmp(pos[0], "join-token") && !strcmp(pos[1], "create"))
        return cmd_join_create(&c);
    if (!strcmp(pos[0], "join-token") && !strcmp(pos[1], "revoke"))
        return cmd_join_revoke(&c, pos[2]);
    return usage();
}
