/* Unit tests of handlers/handshake_parse.c: POST /v1/worker/handshake's body,
 * every refusal's status and exact message (mode, the agent's scope, each
 * capability, data_addr, a returning worker's id), in the order the handler
 * answers them, and the fields a good body gives. */
#include "check.h"
#include "handshake_parse.h"

#include <string.h>

void unit_handshake(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define WID "0123456789abcdef0123456789abcdef"

static const char *const base =
    "{\"runtimes\":[{\"name\":\"runc\",\"tier\":\"CONTAINER\"},{\"name\":\"runsc\",\"tier\":"
    "\"GVISOR\"}],\"templates\":[\"base\",\"py\"],\"cpu_cores\":2.5,\"memory_mb\":4096,"
    "\"slots\":8,\"data_addr\":\"127.0.0.1:7001\",\"hostname\":\"h1\"}";

/* base with patch's keys set (null: removed), parsed. */
static int parse(const char *patch, int scoped, struct handshake_body *hb, char *err, size_t len)
{
    static struct data_addr_allow allow;
    json_t *b = json_loads(base, 0, NULL), *p = json_loads(patch, 0, NULL), *v;
    const char *k;
    int st;

    data_addr_defaults(&allow);
    json_object_foreach(p, k, v)
    {
        if (json_is_null(v))
            json_object_del(b, k);
        else
            json_object_set(b, k, v);
    }
    st = handshake_parse(b, &allow, scoped, hb, err, len);
    /* only st and err are looked at after this: hb borrows from b */
    json_decref(p);
    json_decref(b);
    return st;
}

struct bad {
    const char *patch;
    int scoped;
    int status;
    const char *message; /* exact; ending in '*': a prefix */
};

#define RUNTIME_MSG(i)                                                                             \
    "runtimes[" #i "]: needs a name of 1-24 characters [a-z0-9._-] and a tier (NONE, CONTAINER, "  \
    "GVISOR, MICROVM, UNKNOWN)"

static const struct bad bads[] = {
    {"{\"mode\":5}", 1, 400, "mode: must be \"docker\" or \"agent\""},
    {"{\"mode\":\"laptop\"}", 1, 400, "mode: must be \"docker\" or \"agent\""},
    {"{\"mode\":\"agent\"}", 0, 403,
     "an agent-mode worker needs a workspace-scoped join token; this one enrols into the shared "
     "fleet, where other workspaces' sandboxes would be placed on this machine"},
    /* the scope is answered before any capability */
    {"{\"mode\":\"agent\",\"slots\":0}", 0, 403, "an agent-mode worker needs*"},
    {"{\"runtimes\":null}", 1, 400, "runtimes: must be an array of 1-16 {name, tier}"},
    {"{\"runtimes\":[]}", 1, 400, "runtimes: must be an array of 1-16 {name, tier}"},
    {"{\"runtimes\":{\"name\":\"runc\"}}", 1, 400,
     "runtimes: must be an array of 1-16 {name, tier}"},
    {"{\"runtimes\":[{\"name\":\"Runc\",\"tier\":\"CONTAINER\"}]}", 1, 400, RUNTIME_MSG(0)},
    {"{\"runtimes\":[{\"name\":\"runc\",\"tier\":\"NONE\"},{\"name\":\"x\",\"tier\":\"gvisor\"}]}",
     1, 400, RUNTIME_MSG(1)},
    {"{\"runtimes\":[{\"tier\":\"NONE\"}]}", 1, 400, RUNTIME_MSG(0)},
    {"{\"runtimes\":[{\"name\":\"abcdefghijklmnopqrstuvwxy\",\"tier\":\"NONE\"}]}", 1, 400,
     RUNTIME_MSG(0)},
    {"{\"templates\":null}", 1, 400, "templates: must be an array of at most 16 names"},
    {"{\"templates\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\","
     "\"m\",\"n\",\"o\",\"p\",\"q\"]}",
     1, 400, "templates: must be an array of at most 16 names"},
    {"{\"templates\":[\"base\",7]}", 1, 400, "templates[1]: must be a name [a-z0-9._-]"},
    {"{\"templates\":[\"Base\"]}", 1, 400, "templates[0]: must be a name [a-z0-9._-]"},
    {"{\"egress\":\"yes\"}", 1, 400, "egress: must be true or false"},
    {"{\"public_traffic\":1}", 1, 400, "public_traffic: must be true or false"},
    {"{\"cpu_cores\":null}", 1, 400, "cpu_cores: must be a positive number"},
    {"{\"cpu_cores\":0}", 1, 400, "cpu_cores: must be a positive number"},
    {"{\"cpu_cores\":\"2\"}", 1, 400, "cpu_cores: must be a positive number"},
    {"{\"cpu_cores\":100001}", 1, 400, "cpu_cores: must be a positive number"},
    {"{\"memory_mb\":1.5}", 1, 400, "memory_mb: must be a positive integer"},
    {"{\"memory_mb\":0}", 1, 400, "memory_mb: must be a positive integer"},
    {"{\"slots\":0}", 1, 400, "slots: must be an integer in [1, 100000]"},
    {"{\"slots\":100001}", 1, 400, "slots: must be an integer in [1, 100000]"},
    {"{\"slots\":null}", 1, 400, "slots: must be an integer in [1, 100000]"},
    {"{\"data_addr\":null}", 1, 400, "data_addr: must be a string, IP:port"},
    {"{\"data_addr\":7001}", 1, 400, "data_addr: must be a string, IP:port"},
    {"{\"data_addr\":\"10.0.0.1:7001\"}", 1, 400, "data_addr: *"},
    {"{\"data_addr\":\"127.0.0.1:22\"}", 1, 400, "data_addr: *"},
    /* a tunnelled worker has no data_addr; tunnel is a boolean */
    {"{\"tunnel\":true}", 1, 400, "data_addr: a tunnelled worker has none (tunnel is true)"},
    {"{\"tunnel\":1,\"data_addr\":null}", 1, 400, "tunnel: must be true or false"},
    {"{\"tunnel\":false,\"data_addr\":null}", 1, 400, "data_addr: must be a string, IP:port"},
    /* a returning worker: after every capability */
    {"{\"worker_id\":\"" WID "\"}", 1, 403, "worker_id needs the worker_secret it was given"},
    {"{\"worker_id\":\"not-an-id\",\"worker_secret\":\"s\"}", 1, 403,
     "worker_id needs the worker_secret it was given"},
    {"{\"worker_id\":\"" WID "\",\"slots\":0}", 1, 400, "slots: must be an integer in [1, 100000]"},
};

static int message_is(const char *got, const char *want)
{
    size_t n = strlen(want);

    if (n && want[n - 1] == '*')
        return strncmp(got, want, n - 1) == 0;
    return strcmp(got, want) == 0;
}

static void test_refusals(void)
{
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        struct handshake_body hb;
        char err[256] = "";
        int st = parse(bads[i].patch, bads[i].scoped, &hb, err, sizeof(err));

        CHECK(st == bads[i].status && message_is(err, bads[i].message));
        if (st != bads[i].status || !message_is(err, bads[i].message))
            fprintf(stderr, "  row %zu: %d \"%s\"\n", i, st, err);
    }
}

static void test_good(void)
{
    struct data_addr_allow allow;
    struct handshake_body hb;
    char err[256] = "";
    json_t *b = json_loads(base, 0, NULL);

    data_addr_defaults(&allow);
    CHECK(handshake_parse(b, &allow, 0, &hb, err, sizeof(err)) == 0);
    CHECK(strcmp(hb.runtimes, "runc:1,runsc:2,") == 0 && strcmp(hb.templates, ",base,py,") == 0);
    CHECK(hb.runtimes_json == json_object_get(b, "runtimes") &&
          hb.templates_json == json_object_get(b, "templates"));
    CHECK(!hb.agent && !hb.egress && hb.public_ok && hb.cpu == 2.5 && hb.mem == 4096 &&
          hb.slots == 8);
    CHECK(strcmp(hb.data_addr, "127.0.0.1:7001") == 0 && strcmp(hb.hostname, "h1") == 0);
    CHECK(hb.worker_id == NULL && hb.worker_secret == NULL);

    /* an agent (scoped): not public unless it says so; a hostname too long is dropped */
    json_object_set_new(b, "mode", json_string("agent"));
    json_object_set_new(b, "egress", json_true());
    json_object_set_new(b, "templates", json_array());
    char host[300];
    memset(host, 'h', sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    json_object_set_new(b, "hostname", json_string(host));
    CHECK(handshake_parse(b, &allow, 1, &hb, err, sizeof(err)) == 0);
    CHECK(hb.agent && hb.egress && !hb.public_ok && strcmp(hb.templates, ",") == 0 &&
          strcmp(hb.hostname, "") == 0);
    json_object_set_new(b, "public_traffic", json_true());
    CHECK(handshake_parse(b, &allow, 1, &hb, err, sizeof(err)) == 0 && hb.public_ok);

    /* docker, explicitly, and not public; a returning worker's id and secret */
    json_object_set_new(b, "mode", json_string("docker"));
    json_object_set_new(b, "public_traffic", json_false());
    json_object_set_new(b, "worker_id", json_string(WID));
    json_object_set_new(b, "worker_secret", json_string("s3cret"));
    CHECK(handshake_parse(b, &allow, 0, &hb, err, sizeof(err)) == 0);
    CHECK(!hb.agent && !hb.public_ok && strcmp(hb.worker_id, WID) == 0 &&
          strcmp(hb.worker_secret, "s3cret") == 0);
    /* a worker_id that is not a string: a new worker, as before */
    json_object_set_new(b, "worker_id", json_integer(5));
    CHECK(handshake_parse(b, &allow, 0, &hb, err, sizeof(err)) == 0 && hb.worker_id == NULL);
    CHECK(!hb.tunnel);
    /* behind its tunnel: no data_addr, the record holds the marker */
    json_object_del(b, "data_addr");
    json_object_set_new(b, "tunnel", json_true());
    CHECK(handshake_parse(b, &allow, 0, &hb, err, sizeof(err)) == 0 && hb.tunnel &&
          strcmp(hb.data_addr, TUNNEL_DATA_ADDR) == 0);
    json_decref(b);
}

void unit_handshake(int *total_passed, int *total_failed)
{
    test_refusals();
    test_good();
    *total_passed += passed;
    *total_failed += failed;
}
