/* Unit tests of the sandbox views (handlers/sandbox_view.c, e2b_view.c): a
 * struct sandbox_record rendered natively and in E2B's three shapes, compared
 * with the expected JSON; and a record filled from a hash, defaults included. */
#include "check.h"
#include "e2b_spec.h"
#include "e2b_view.h"
#include "sandbox_token.h"
#include "sandbox_view.h"
#include "telemetry_view.h"

#include <stdlib.h>
#include <string.h>

void unit_views(int *total_passed, int *total_failed);

static int passed, failed;

#define SBID "0123456789abcdef0123"
#define POLICY "{\"allow\":[\"x.com\"],\"deny\":[\"0.0.0.0/0\",\"::/0\"]}"

/* 1 when got (consumed) equals the JSON text want; both printed if not. */
static int same(json_t *got, const char *want)
{
    json_t *w = json_loads(want, 0, NULL);
    int eq = got && w && json_equal(got, w);

    if (!eq) {
        char *g = got ? json_dumps(got, JSON_SORT_KEYS) : NULL;
        fprintf(stderr, "got  %s\nwant %s\n", g ? g : "(null)", want);
        free(g);
    }
    json_decref(w);
    json_decref(got);
    return eq;
}

static void sample(struct sandbox_record *r)
{
    sandbox_record_defaults(r);
    r->id = SBID;
    r->ws = "w1";
    r->state = SANDBOX_STATE_RUNNING;
    r->worker = "wk1";
    r->runtime = "runc";
    r->tier = "CONTAINER";
    r->metadata = "{\"a\":\"b\"}";
    r->allowed_domains = "[\"x.com\"]";
    r->egress = POLICY;
    r->egress_next = "null";
    r->cpu_cores = 0.5;
    r->memory_mb = 256;
    r->timeout_s = 60;
    r->pids_limit = 1024;
    r->created_at = 1700000000000LL; /* 2023-11-14T22:13:20Z */
    r->started_at = 1700000001500LL;
    r->secure = 1;
}

static void test_native(void)
{
    struct sandbox_record r;

    sample(&r);
    CHECK(same(sandbox_view(&r),
               "{\"sandbox_id\":\"" SBID "\",\"template\":\"base\",\"state\":\"running\","
               "\"isolation\":\"CONTAINER\",\"runtime\":\"runc\",\"require_isolation\":null,"
               "\"worker_id\":\"wk1\",\"cpu_cores\":0.5,\"memory_mb\":256,\"timeout\":60,"
               "\"metadata\":{\"a\":\"b\"},\"allowed_domains\":[\"x.com\"],"
               "\"created_at\":\"2023-11-14T22:13:20.000Z\","
               "\"started_at\":\"2023-11-14T22:13:21.500Z\",\"expires_at\":null,\"reason\":null,"
               "\"secure\":true,\"egress\":" POLICY ","
               "\"egress_next\":{\"egress\":null,\"applies\":\"next_start\"},"
               "\"pids_limit\":1024,\"disk_mb\":null,\"on_timeout\":\"kill\",\"auto_resume\":false,"
               "\"keep_memory\":true,\"paused_memory\":null}"));
    /* Paused without its memory (decision 0074): said while it lasts. */
    r.state = SANDBOX_STATE_PAUSED;
    r.paused_memory = 0;
    r.keep_memory = 0;
    r.pause_on_timeout = 1;
    json_t *v = sandbox_view(&r);
    CHECK(json_is_false(json_object_get(v, "paused_memory")) &&
          json_is_false(json_object_get(v, "keep_memory")));
    json_decref(v);
}

static void test_e2b(void)
{
    struct sandbox_record r;
    struct corral_conf conf;
    char want[2048], envd[SECRET_MAC_HEX], traffic[SECRET_MAC_HEX];

    memset(&conf, 0, sizeof(conf));
    snprintf(conf.gateway_secret, sizeof(conf.gateway_secret), "gw-secret");
    snprintf(conf.domain, sizeof(conf.domain), "corral.test");
    sandbox_token(conf.gateway_secret, SANDBOX_TOKEN_ENVD, SBID, envd);
    sandbox_token(conf.gateway_secret, SANDBOX_TOKEN_TRAFFIC, SBID, traffic);
    sample(&r);
    r.public_traffic = 0;
    snprintf(want, sizeof(want),
             "{\"sandboxID\":\"" SBID "\",\"templateID\":\"base\",\"alias\":\"base\","
             "\"clientID\":\"corral\",\"envdVersion\":\"%s\",\"domain\":\"corral.test\","
             "\"envdAccessToken\":\"%s\",\"trafficAccessToken\":\"%s\"}",
             E2B_ENVD_VERSION, envd, traffic);
    CHECK(same(e2b_view(&r, E2B_SANDBOX, &conf), want));
    snprintf(want, sizeof(want),
             "{\"sandboxID\":\"" SBID "\",\"templateID\":\"base\",\"alias\":\"base\","
             "\"clientID\":\"corral\",\"envdVersion\":\"%s\","
             "\"startedAt\":\"2023-11-14T22:13:21.500Z\",\"endAt\":\"1970-01-01T00:00:00.000Z\","
             "\"cpuCount\":1,\"memoryMB\":256,\"diskSizeMB\":0,\"metadata\":{\"a\":\"b\"},"
             "\"state\":\"running\",\"lifecycle\":{\"onTimeout\":\"kill\",\"autoResume\":false}}",
             E2B_ENVD_VERSION);
    CHECK(same(e2b_view(&r, E2B_LISTED, &conf), want));
    /* Pausing is already "paused" to E2B; the lifecycle is the record's. */
    r.state = SANDBOX_STATE_PAUSING;
    r.pause_on_timeout = r.auto_resume = 1;
    snprintf(want, sizeof(want),
             "{\"sandboxID\":\"" SBID "\",\"templateID\":\"base\",\"alias\":\"base\","
             "\"clientID\":\"corral\",\"envdVersion\":\"%s\","
             "\"startedAt\":\"2023-11-14T22:13:21.500Z\",\"endAt\":\"1970-01-01T00:00:00.000Z\","
             "\"cpuCount\":1,\"memoryMB\":256,\"diskSizeMB\":0,\"metadata\":{\"a\":\"b\"},"
             "\"state\":\"paused\",\"lifecycle\":{\"onTimeout\":\"pause\",\"autoResume\":true}}",
             E2B_ENVD_VERSION);
    CHECK(same(e2b_view(&r, E2B_LISTED, &conf), want));
    r.state = SANDBOX_STATE_RUNNING;
    r.pause_on_timeout = r.auto_resume = 0;
    r.internet = 0;
    snprintf(want, sizeof(want),
             "{\"sandboxID\":\"" SBID "\",\"templateID\":\"base\",\"alias\":\"base\","
             "\"clientID\":\"corral\",\"envdVersion\":\"%s\",\"domain\":\"corral.test\","
             "\"startedAt\":\"2023-11-14T22:13:21.500Z\",\"endAt\":\"1970-01-01T00:00:00.000Z\","
             "\"cpuCount\":1,\"memoryMB\":256,\"diskSizeMB\":0,\"metadata\":{\"a\":\"b\"},"
             "\"state\":\"running\",\"envdAccessToken\":\"%s\",\"allowInternetAccess\":false,"
             "\"network\":{\"allowPublicTraffic\":false,\"allowOut\":[\"x.com\"],"
             "\"denyOut\":[\"0.0.0.0/0\",\"::/0\"]},"
             "\"lifecycle\":{\"onTimeout\":\"kill\",\"autoResume\":false},\"volumeMounts\":[]}",
             E2B_ENVD_VERSION, envd);
    CHECK(same(e2b_view(&r, E2B_DETAIL, &conf), want));
}

/* A reply of the HGETALL shape over n field/value pairs. */
struct hash {
    redisReply top, items[16], *ptrs[16];
};

static const redisReply *hash_of(struct hash *h, const char *const *fv, size_t n)
{
    memset(h, 0, sizeof(*h));
    h->top.type = REDIS_REPLY_ARRAY;
    h->top.elements = n * 2;
    h->top.element = h->ptrs;
    for (size_t i = 0; i < n * 2; i++) {
        h->items[i].type = REDIS_REPLY_STRING;
        h->items[i].str = (char *)fv[i];
        h->items[i].len = strlen(fv[i]);
        h->ptrs[i] = &h->items[i];
    }
    return &h->top;
}

static void test_fill(void)
{
    static const char *const fv[] = {"id",          SBID, "state",      "pending", "secure", "1",
                                     "cpu_cores",   "2",  "started_at", "",        "egress", "",
                                     "egress_next", ""};
    struct sandbox_record r;
    struct hash h;

    sandbox_record_fill(&r, hash_of(&h, fv, 0));
    /* An empty record: every default (an older sandbox had no secure field). */
    CHECK(!strcmp(r.id, "") && !strcmp(r.template_id, SANDBOX_DEFAULT_TEMPLATE) && !r.secure &&
          r.public_traffic && r.cpu_cores == SANDBOX_DEFAULT_CPU_CORES &&
          r.memory_mb == SANDBOX_DEFAULT_MEMORY_MB && r.timeout_s == SANDBOX_DEFAULT_TIMEOUT_S &&
          !strcmp(r.metadata, "{}") && r.internet == -1 && r.egress_next == NULL && !r.pids_limit);
    sandbox_record_fill(&r, hash_of(&h, fv, sizeof(fv) / sizeof(fv[0]) / 2));
    CHECK(!strcmp(r.id, SBID) && r.state == SANDBOX_STATE_PENDING && r.secure && r.cpu_cores == 2 &&
          r.started_at == 0 && !strcmp(r.egress, "") && r.egress_next && !*r.egress_next &&
          !sandbox_is_running(&r) && r.owned == NULL);
    /* A state no table names is kept, and shown as it was; none at all: null. */
    static const char *const odd[] = {"state", "stopping"};
    sandbox_record_fill(&r, hash_of(&h, odd, 1));
    json_t *v = sandbox_view(&r);
    const char *shown = json_string_value(json_object_get(v, "state"));
    CHECK(r.state == SANDBOX_STATE_UNKNOWN && shown && !strcmp(shown, "stopping") &&
          !sandbox_is_live(&r));
    json_decref(v);
    sandbox_record_fill(&r, hash_of(&h, fv, 0));
    v = sandbox_view(&r);
    CHECK(r.state == SANDBOX_STATE_UNKNOWN && json_is_null(json_object_get(v, "state")));
    json_decref(v);
}

/* A worker's sample and line in, stored text out as E2B's shapes. */
static void test_telemetry(void)
{
    const long long now = 1796119200000LL;
    char err[128], *m, *l;
    long long ms = 0;
    json_t *in = json_pack("{s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I}", "ts_ms", (json_int_t)now,
                           "cpu_count", (json_int_t)2, "cpu_used_pct", 12.345, "mem_used",
                           (json_int_t)10, "mem_total", (json_int_t)20, "mem_cache", (json_int_t)3,
                           "disk_used", (json_int_t)4, "disk_total", (json_int_t)5);
    json_t *line = json_pack("{s:I, s:s}", "ts_ns", (json_int_t)(now * 1000000 + 7), "line",
                             "{\"level\":\"warn\",\"message\":\"process ended\",\"pid\":\"9\","
                             "\"n\":3,\"time\":\"x\"}");
    json_t *out;

    m = telemetry_metric_in(in, now, &ms, err, sizeof(err));
    CHECK(m && ms == now);
    out = telemetry_metric_e2b(m);
    CHECK(json_integer_value(json_object_get(out, "timestampUnix")) == now / 1000);
    CHECK(json_real_value(json_object_get(out, "cpuUsedPct")) == 12.35);
    CHECK(json_integer_value(json_object_get(out, "memCache")) == 3);
    CHECK(strcmp(json_string_value(json_object_get(out, "timestamp")),
                 "2026-12-01T10:00:00.000Z") == 0);
    json_decref(out);
    free(m);
    json_object_set_new(in, "ts_ms", json_integer(now + TELEMETRY_SKEW_MS + 1));
    CHECK(!telemetry_metric_in(in, now, &ms, err, sizeof(err)) && strstr(err, "metric.ts_ms"));
    json_object_set_new(in, "ts_ms", json_integer(now));
    json_object_set_new(in, "cpu_count", json_string("2"));
    CHECK(!telemetry_metric_in(in, now, &ms, err, sizeof(err)) && strstr(err, "metric.cpu_count"));

    l = telemetry_log_in(line, now, &ms, err, sizeof(err));
    CHECK(l && ms == now);
    out = telemetry_log_entry(l);
    CHECK(strcmp(json_string_value(json_object_get(out, "level")), "warn") == 0);
    CHECK(strcmp(json_string_value(json_object_get(out, "message")), "process ended") == 0);
    CHECK(json_object_size(json_object_get(out, "fields")) == 2); /* pid, n; not time */
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(out, "fields"), "n")), "3") ==
          0);
    json_decref(out);
    free(l);
    json_object_set_new(line, "line", json_string("{not json"));
    l = telemetry_log_in(line, now, &ms, err, sizeof(err));
    out = telemetry_log_entry(l);
    CHECK(strcmp(json_string_value(json_object_get(out, "level")), "info") == 0);
    CHECK(strcmp(json_string_value(json_object_get(out, "message")), "{not json") == 0);
    json_decref(out);
    free(l);
    CHECK(telemetry_level_rank("error") == 3 && telemetry_level_rank("warning") == -1);
    CHECK(telemetry_metric_e2b("garbage") == NULL && telemetry_log_entry("{}") == NULL);
    json_decref(in);
    json_decref(line);
}

void unit_views(int *total_passed, int *total_failed)
{
    test_telemetry();
    test_native();
    test_e2b();
    test_fill();
    *total_passed += passed;
    *total_failed += failed;
}
