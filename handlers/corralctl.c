/* corralctl: the operator's CLI. Talks to Redis with corral.conf, the same
 * state corral-api serves, so it works while the API is down.
 *
 *   corralctl [-c conf] [--json] workspace create NAME
 *   corralctl [-c conf] [--json] key create --workspace ID --role owner|member
 *   corralctl [-c conf] [--json] join-token create [--workspace ID] [--ttl SECONDS]
 *   corralctl [-c conf] [--json] join-token revoke TOKEN_ID
 */
#include "accounts.h"
#include "corral_conf.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cli {
    struct rconn rc;
    struct corral_conf conf;
    int json;
    const char *workspace, *role, *ttl;
};

static int usage(void)
{
    fprintf(stderr, "usage: corralctl [-c corral.conf] [--json] COMMAND\n"
                    "  workspace create NAME\n"
                    "  key create --workspace ID --role owner|member\n"
                    "  join-token create [--workspace ID] [--ttl SECONDS]\n"
                    "  join-token revoke TOKEN_ID\n");
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

static int cmd_workspace_create(struct cli *c, const char *name)
{
    char ws[TOKEN_WS_MAX], id[TOKEN_ID_MAX], key[TOKEN_TEXT_MAX];

    if (!name || !*name || strlen(name) > 128)
        return fail("workspace create: NAME of 1-128 characters required");
    if (workspace_create(&c->rc, name, ws) != 0 ||
        apikey_create(&c->rc, c->conf.server_secret, ws, ROLE_OWNER, id, key) != 0)
        return fail("redis unreachable");
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
    int n;

    if (!id || !token_is_id(id))
        return fail("join-token revoke: TOKEN_ID required");
    n = jointoken_revoke(&c->rc, NULL, id);
    if (n < 0)
        return fail("redis unreachable");
    if (n == 0)
        return fail("no such join token");
    printf(c->json ? "{\"revoked\":\"%s\"}\n" : "revoked %s\n", id);
    return 0;
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
    if (parse(&c, argc, argv, &conf, pos, &npos) != 0 || npos < 2)
        return usage();
    if (corral_conf_load(conf, &c.conf, err, sizeof(err)) != 0) {
        fprintf(stderr, "corralctl: config: %s\n", err);
        return 1;
    }
    corral_conf_rconn(&c.conf, &c.rc);
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
