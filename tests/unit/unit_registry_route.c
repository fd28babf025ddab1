/* Unit tests of POST /v1/worker/registry-token's pure parts: the registry
 * names it reads (common/registry_names.c, both ways), its body
 * (handlers/registry_token_parse.c, each refusal's exact message), the
 * decision table an attacker would probe (a scoped worker of workspace A
 * asking for B's repository, a push the template store denies), and its
 * row of the route table. No Redis, no FastCGI. */
#include "check.h"
#include "registry_names.h"
#include "registry_token_parse.h"
#include "router.h"

#include <stdio.h>
#include <string.h>

void unit_registry_route(int *total_passed, int *total_failed);

static int passed, failed;

#define WS_A "0123456789abcdef"
#define WS_B "fedcba9876543210"
#define REPO_RULE                                                                                  \
    "repository: must be a template's repository, corral/w<16 hex>/<template> or "                 \
    "corral/fleet/<template>"

struct name_row {
    const char *repo;
    const char *ws, *tpl; /* NULL: refused */
};

static const struct name_row name_rows[] = {
    {"corral/w" WS_A "/tpl-0123456789abcdef0123", WS_A, "tpl-0123456789abcdef0123"},
    {"corral/fleet/base", "", "base"},
    {"corral/fleet/tpl-x", "", "tpl-x"},
    {"corral/w" WS_A "/a", WS_A, "a"},
    {"corral/w" WS_A "/", NULL, NULL},
    {"corral/w" WS_A, NULL, NULL},
    {"corral/w0123456789ABCDEF/tpl-x", NULL, NULL}, /* uppercase is not ours */
    {"corral/w0123456789abcde/tpl-x", NULL, NULL},  /* 15 hex */
    {"corral/w0123456789abcdef0/tpl-x", NULL, NULL},
    {"corral/x" WS_A "/tpl-x", NULL, NULL},
    {"corral/" WS_A "/tpl-x", NULL, NULL},
    {"corral/fleets/tpl-x", NULL, NULL},
    {"corral/fleet/tpl-x/extra", NULL, NULL}, /* a deeper path is another repository */
    {"corral/fleet/../w" WS_B "/tpl-x", NULL, NULL},
    {"corral/fleet/-x", NULL, NULL},
    {"corral/fleet/x-", NULL, NULL},
    {"corral/fleet/Tpl", NULL, NULL},
    {"corral/fleet/tpl_x", NULL, NULL},
    {"corral/fleet/tpl.x", NULL, NULL},
    {"other/fleet/tpl-x", NULL, NULL},
    {"/corral/fleet/tpl-x", NULL, NULL},
    {"127.0.0.1:5000/corral/fleet/tpl-x", NULL, NULL},
    {"", NULL, NULL},
};

static void test_names(void)
{
    char ws[17], tpl[49], out[REGISTRY_REPO_MAX], long_tpl[60];

    for (size_t i = 0; i < sizeof(name_rows) / sizeof(name_rows[0]); i++) {
        const struct name_row *r = &name_rows[i];
        int rc = registry_repo_parse(r->repo, ws, tpl);
        int ok = r->ws ? rc == 0 && !strcmp(ws, r->ws) && !strcmp(tpl, r->tpl) : rc == -1;

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  registry name row %zu (%s): %d\n", i, r->repo, rc);
        /* what parses is what registry_repo spells */
        if (r->ws)
            CHECK(registry_repo(r->ws, r->tpl, out, sizeof(out)) == 0 && !strcmp(out, r->repo));
    }
    CHECK(registry_repo_parse(NULL, ws, tpl) == -1);
    /* 48 characters of template fit; 49 do not, either way */
    memset(long_tpl, 'a', 48);
    long_tpl[48] = '\0';
    CHECK(registry_repo("", long_tpl, out, sizeof(out)) == 0 &&
          registry_repo_parse(out, ws, tpl) == 0 && !strcmp(tpl, long_tpl));
    snprintf(out, sizeof(out), "corral/fleet/%sa", long_tpl);
    CHECK(registry_repo_parse(out, ws, tpl) == -1);
    CHECK(registry_repo("",
                        "aa"
                        "a",
                        out, 10) == -1); /* out too short */
    CHECK(registry_repo("0123", "tpl-x", out, sizeof(out)) == -1);
    CHECK(registry_repo(WS_A, "tpl/x", out, sizeof(out)) == -1);
}

struct ask_row {
    const char *body;
    const char *message; /* NULL: accepted */
    const char *ws;
    int push;
};

static const struct ask_row ask_rows[] = {
    {"{\"repository\":\"corral/w" WS_A "/tpl-x\"}", NULL, WS_A, 0},
    {"{\"repository\":\"corral/w" WS_A "/tpl-x\",\"push\":false}", NULL, WS_A, 0},
    {"{\"repository\":\"corral/w" WS_A "/tpl-x\",\"push\":true}", NULL, WS_A, 1},
    {"{\"repository\":\"corral/fleet/base\",\"push\":null}", NULL, "", 0},
    {"{}", REPO_RULE, NULL, 0},
    {"{\"repository\":5}", REPO_RULE, NULL, 0},
    {"{\"repository\":\"\"}", REPO_RULE, NULL, 0},
    {"{\"repository\":\"library/ubuntu\"}", REPO_RULE, NULL, 0},
    {"{\"repository\":\"corral/w" WS_A "/tpl-x/../../w" WS_B "/tpl-x\"}", REPO_RULE, NULL, 0},
    {"{\"repository\":\"corral/fleet/base\",\"push\":1}", "push: must be a boolean", NULL, 0},
    {"{\"repository\":\"corral/fleet/base\",\"push\":\"true\"}", "push: must be a boolean", NULL,
     0},
};

static void test_ask(void)
{
    char err[200];
    struct registry_ask a;

    for (size_t i = 0; i < sizeof(ask_rows) / sizeof(ask_rows[0]); i++) {
        const struct ask_row *r = &ask_rows[i];
        json_t *b = json_loads(r->body, 0, NULL);
        int rc, ok;

        err[0] = '\0';
        rc = b ? registry_ask_parse(b, &a, err, sizeof(err)) : -2;
        ok = r->message ? rc == -1 && !strcmp(err, r->message) && a.repo[0] == '\0'
                        : rc == 0 && !strcmp(a.ws, r->ws) && a.push == r->push &&
                              !strcmp(a.repo, json_string_value(json_object_get(b, "repository")));
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  registry ask row %zu: %d \"%s\"\n", i, rc, err);
        json_decref(b);
    }
}

struct verdict_row {
    const char *pool; /* the worker's join token's workspace; "" the unscoped fleet */
    const char *repo;
    int push, push_allowed; /* what build_push_allowed answered */
    enum registry_verdict want;
};

static const struct verdict_row verdict_rows[] = {
    /* pull */
    {WS_A, "corral/w" WS_A "/tpl-x", 0, 0, REGISTRY_GRANTED},
    {WS_A, "corral/fleet/base", 0, 0, REGISTRY_GRANTED},
    {WS_A, "corral/w" WS_B "/tpl-x", 0, 0, REGISTRY_OTHER_WORKSPACE},
    {WS_B, "corral/w" WS_A "/tpl-x", 0, 0, REGISTRY_OTHER_WORKSPACE},
    {"", "corral/w" WS_A "/tpl-x", 0, 0, REGISTRY_GRANTED},
    {"", "corral/w" WS_B "/tpl-x", 0, 0, REGISTRY_GRANTED},
    {"", "corral/fleet/base", 0, 0, REGISTRY_GRANTED},
    /* push: only what the store allows, and never across workspaces */
    {WS_A, "corral/w" WS_A "/tpl-x", 1, 1, REGISTRY_GRANTED},
    {WS_A, "corral/w" WS_A "/tpl-x", 1, 0, REGISTRY_PUSH_DENIED},
    {WS_A, "corral/w" WS_A "/tpl-x", 1, -1, REGISTRY_PUSH_DENIED},
    {WS_A, "corral/w" WS_B "/tpl-x", 1, 1, REGISTRY_OTHER_WORKSPACE},
    {WS_A, "corral/fleet/base", 1, 0, REGISTRY_PUSH_DENIED},
    {"", "corral/fleet/base", 1, 0, REGISTRY_PUSH_DENIED},
    {"", "corral/fleet/base", 1, 1, REGISTRY_GRANTED},
    {"", "corral/w" WS_B "/tpl-x", 1, 0, REGISTRY_PUSH_DENIED},
    {"", "corral/w" WS_B "/tpl-x", 1, 1, REGISTRY_GRANTED},
};

static void test_verdicts(void)
{
    for (size_t i = 0; i < sizeof(verdict_rows) / sizeof(verdict_rows[0]); i++) {
        const struct verdict_row *r = &verdict_rows[i];
        struct registry_ask a = {.push = r->push};
        enum registry_verdict v;

        CHECK(registry_repo_parse(r->repo, a.ws, a.tpl) == 0);
        snprintf(a.repo, sizeof(a.repo), "%s", r->repo);
        v = registry_decide(r->pool, &a, r->push_allowed);
        CHECK(v == r->want);
        if (v != r->want)
            fprintf(stderr, "  registry verdict row %zu: %d\n", i, (int)v);
    }
    CHECK(!strcmp(registry_verdict_message(REGISTRY_OTHER_WORKSPACE),
                  "this worker's pool may not pull another workspace's templates"));
    CHECK(!strcmp(registry_verdict_message(REGISTRY_PUSH_DENIED),
                  "push only to the target of a build in progress on this worker"));
    CHECK(!strcmp(registry_verdict_message(REGISTRY_GRANTED), ""));
}

static void test_route(void)
{
    struct request req;
    struct route_match m;

    memset(&req, 0, sizeof(req));
    req.method = "POST";
    snprintf(req.path, sizeof(req.path), "/v1/worker/registry-token");
    router_match(&req, &m);
    CHECK(m.outcome == ROUTE_SERVED && m.fn == h_worker_registry_token &&
          m.access == ACCESS_WORKER);
    memset(&req, 0, sizeof(req));
    req.method = "GET";
    snprintf(req.path, sizeof(req.path), "/v1/worker/registry-token");
    router_match(&req, &m);
    CHECK(m.outcome == ROUTE_METHOD_NOT_ALLOWED);
}

void unit_registry_route(int *total_passed, int *total_failed)
{
    test_names();
    test_ask();
    test_verdicts();
    test_route();
    *total_passed += passed;
    *total_failed += failed;
}
