/* Unit tests of the sandbox record's codecs (store/sandbox_fields.c,
 * store/sandbox_codec.c): a create's record encodes to exactly the pairs the
 * create has always written, every field survives decode(encode(r)), and
 * each enum's table keeps its wire words. */
#include "check.h"
#include "sandbox_fields.h"
#include "sandbox_codec.h"
#include "sandbox_store.h"

#include <stdlib.h>
#include <string.h>

void unit_sandbox_fields(int *total_passed, int *total_failed);

static int passed, failed;

#define SBID "0123456789abcdef0123"

/* A record as a create fills it (scheduler.c's record_of). */
static void created(struct sandbox_record *r)
{
    sandbox_record_defaults(r);
    r->id = SBID;
    r->ws = "w1";
    r->template_id = "python";
    r->state = SANDBOX_STATE_PENDING;
    r->pool = "p1";
    r->worker = "wk1";
    r->runtime = "runsc";
    r->tier = "GVISOR";
    r->require_isolation = "GVISOR";
    r->timeout_s = 60;
    r->cpu_cores = 0.5;
    r->memory_mb = 256;
    r->metadata = "{\"a\":\"b\"}";
    r->env = "v1.sealed";
    r->allowed_domains = "[\"x.com\"]";
    r->created_at = 1700000000000LL;
    r->egress_policy = 1;
    r->secure = 1;
    r->public_traffic = 0;
    r->egress = "{\"allow\":[\"x.com\"],\"deny\":[]}";
    r->internet = -1;
    r->pids_limit = 1024;
    r->disk_mb = 2048;
    r->pause_on_timeout = 1;
    r->auto_resume = 0;
    r->keep_memory = 0;
    r->image = "";
    r->base_template = "";
    r->volumes = "[{\"volume\":\"v\",\"path\":\"/data\"}]";
    r->start = "{\"cmd\":\"srv\"}";
    r->build = "bld-1";
    r->build_spec = "{\"id\":\"bld-1\"}";
    r->mask_host = "localhost:${PORT}";
}

/* Exactly what scheduler.c's record_and_send spelled before the table:
 * field, value, ... */
static const char *const want[] = {"id",
                                   SBID,
                                   "ws",
                                   "w1",
                                   "template",
                                   "python",
                                   "state",
                                   "pending",
                                   "pool",
                                   "p1",
                                   "worker",
                                   "wk1",
                                   "runtime",
                                   "runsc",
                                   "tier",
                                   "GVISOR",
                                   "require_isolation",
                                   "GVISOR",
                                   "timeout",
                                   "60",
                                   "cpu_cores",
                                   "0.500",
                                   "memory_mb",
                                   "256",
                                   "metadata",
                                   "{\"a\":\"b\"}",
                                   "env",
                                   "v1.sealed",
                                   "allowed_domains",
                                   "[\"x.com\"]",
                                   "created_at",
                                   "1700000000000",
                                   "egress_policy",
                                   "1",
                                   "secure",
                                   "1",
                                   "public",
                                   "0",
                                   "egress",
                                   "{\"allow\":[\"x.com\"],\"deny\":[]}",
                                   "internet",
                                   "",
                                   "pids_limit",
                                   "1024",
                                   "disk_mb",
                                   "2048",
                                   "on_timeout",
                                   "pause",
                                   "auto_resume",
                                   "0",
                                   "keep_memory",
                                   "0",
                                   "image",
                                   "",
                                   "base_template",
                                   "",
                                   "volumes",
                                   "[{\"volume\":\"v\",\"path\":\"/data\"}]",
                                   "start",
                                   "{\"cmd\":\"srv\"}",
                                   "build",
                                   "bld-1",
                                   "build_spec",
                                   "{\"id\":\"bld-1\"}",
                                   "mask_host",
                                   "localhost:${PORT}"};

static void test_create_pairs(void)
{
    const int npairs = (int)(sizeof(want) / sizeof(want[0]) / 2);
    struct sandbox_record r;
    struct sandbox_encoded e;
    int same = 1;

    created(&r);
    r.reason = "not a create's"; /* never written by a create */
    r.egress_next = "null";
    sandbox_record_encode(&r, SANDBOX_ENCODE_CREATE, &e);
    CHECK(e.n == npairs);
    for (int i = 0; i < 2 * npairs && i < 2 * e.n; i++)
        if (strcmp(e.fv[i], want[i]) != 0) {
            fprintf(stderr, "pair %d: got '%s', want '%s'\n", i / 2, e.fv[i], want[i]);
            same = 0;
        }
    CHECK(same);
}

/* The other spellings of a create's flags and of allow_internet_access. */
static void test_create_flags(void)
{
    struct sandbox_record r;
    struct sandbox_encoded e;

    created(&r);
    r.internet = 1;
    r.pause_on_timeout = 0;
    r.public_traffic = 1;
    sandbox_record_encode(&r, SANDBOX_ENCODE_CREATE, &e);
    CHECK(!strcmp(e.fv[41], "1") && !strcmp(e.fv[47], "kill") && !strcmp(e.fv[37], "1"));
    r.internet = 0;
    sandbox_record_encode(&r, SANDBOX_ENCODE_CREATE, &e);
    CHECK(!strcmp(e.fv[40], "internet") && !strcmp(e.fv[41], "0"));
}

/* An HGETALL-shaped reply over e's pairs. */
struct hash {
    redisReply top, items[2 * SANDBOX_FIELDS_MAX], *ptrs[2 * SANDBOX_FIELDS_MAX];
};

static const redisReply *hash_of(struct hash *h, const struct sandbox_encoded *e)
{
    memset(h, 0, sizeof(*h));
    h->top.type = REDIS_REPLY_ARRAY;
    h->top.elements = (size_t)e->n * 2;
    h->top.element = h->ptrs;
    for (size_t i = 0; i < (size_t)e->n * 2; i++) {
        h->items[i].type = REDIS_REPLY_STRING;
        h->items[i].str = (char *)e->fv[i];
        h->items[i].len = strlen(e->fv[i]);
        h->ptrs[i] = &h->items[i];
    }
    return &h->top;
}

static int text_same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* 1 when every field of the table holds the same value in a and b. */
static int records_same(const struct sandbox_record *a, const struct sandbox_record *b)
{
    int same = 1;

    for (size_t i = 0; i < sandbox_nfields; i++) {
        const struct sandbox_field *f = &sandbox_fields[i];
        const void *x = (const char *)a + f->offset, *y = (const char *)b + f->offset;
        int eq = f->kind == SANDBOX_FIELD_TEXT || f->kind == SANDBOX_FIELD_TEXT_OR_NULL
                     ? text_same(*(const char *const *)x, *(const char *const *)y)
                 : f->kind == SANDBOX_FIELD_STATE  ? a->state == b->state
                 : f->kind == SANDBOX_FIELD_REAL   ? *(const double *)x == *(const double *)y
                 : f->kind == SANDBOX_FIELD_LONG   ? *(const long *)x == *(const long *)y
                 : f->kind == SANDBOX_FIELD_MILLIS ? *(const long long *)x == *(const long long *)y
                                                   : *(const int *)x == *(const int *)y;
        if (!eq)
            fprintf(stderr, "field %s differs after the round trip\n", f->name);
        same &= eq;
    }
    return same;
}

static int round_trips(const struct sandbox_record *r, enum sandbox_encode_set set)
{
    struct sandbox_encoded e;
    struct sandbox_record back;
    struct hash h;

    sandbox_record_encode(r, set, &e);
    sandbox_record_fill(&back, hash_of(&h, &e));
    return records_same(r, &back);
}

static void test_round_trip(void)
{
    struct sandbox_record r;

    created(&r);
    CHECK(round_trips(&r, SANDBOX_ENCODE_CREATE));
    /* A record later in its life: every field the transitions write too. */
    r.state = SANDBOX_STATE_PAUSED;
    r.reason = "worker lost";
    r.egress_next = "";
    r.started_at = 1700000001500LL;
    r.expires_at = 1700000061500LL;
    r.paused_memory = 0;
    r.internet = 1;
    r.image = "corral-snap-1";
    r.base_template = "base";
    CHECK(round_trips(&r, SANDBOX_ENCODE_ALL));
    r.egress_next = NULL; /* none recorded: stays absent */
    r.internet = 0;
    CHECK(round_trips(&r, SANDBOX_ENCODE_ALL));
    /* Every default survives too. */
    sandbox_record_defaults(&r);
    r.id = SBID;
    CHECK(round_trips(&r, SANDBOX_ENCODE_ALL));
    /* Every field is named once. */
    int unique = 1;
    for (size_t i = 0; i < sandbox_nfields; i++)
        for (size_t j = i + 1; j < sandbox_nfields; j++)
            unique &= strcmp(sandbox_fields[i].name, sandbox_fields[j].name) != 0;
    CHECK(unique && sandbox_nfields == 38);
}

static void test_states(void)
{
    static const char *const words[] = {"pending",  "running", "pausing", "paused",
                                        "resuming", "exited",  "error",   "lost"};
    int all = 1;

    for (int s = SANDBOX_STATE_PENDING; s < SANDBOX_STATE_COUNT; s++)
        all &= !strcmp(sandbox_state_name((enum sandbox_state)s), words[s - 1]) &&
               sandbox_state_parse(words[s - 1]) == (enum sandbox_state)s;
    CHECK(all && SANDBOX_STATE_COUNT == 9);
    CHECK(sandbox_state_parse("failed") == SANDBOX_STATE_UNKNOWN &&
          sandbox_state_parse("") == SANDBOX_STATE_UNKNOWN &&
          sandbox_state_parse(NULL) == SANDBOX_STATE_UNKNOWN &&
          sandbox_state_parse("Running") == SANDBOX_STATE_UNKNOWN &&
          !strcmp(sandbox_state_name(SANDBOX_STATE_UNKNOWN), ""));
    CHECK(sandbox_state_is_live(SANDBOX_STATE_RUNNING) &&
          sandbox_state_is_live(SANDBOX_STATE_PAUSING) &&
          sandbox_state_is_live(SANDBOX_STATE_PAUSED) &&
          sandbox_state_is_live(SANDBOX_STATE_RESUMING) &&
          !sandbox_state_is_live(SANDBOX_STATE_PENDING) &&
          !sandbox_state_is_live(SANDBOX_STATE_LOST) &&
          !sandbox_state_is_live(SANDBOX_STATE_UNKNOWN));
}

static void test_outcomes(void)
{
    static const char *const words[] = {"ok",     "pause",   "kill",      "notdue",
                                        "absent", "network", "over_limit"};
    enum sandbox_state by = SANDBOX_STATE_LOST;
    int all = 1;

    for (int o = TRANSITION_OK; o < TRANSITION_REFUSED; o++)
        all &= !strcmp(transition_outcome_name((enum transition_outcome)o), words[o]) &&
               transition_outcome_parse(words[o], &by) == (enum transition_outcome)o &&
               by == SANDBOX_STATE_UNKNOWN;
    CHECK(all);
    CHECK(transition_outcome_parse("pausing", &by) == TRANSITION_REFUSED &&
          by == SANDBOX_STATE_PAUSING);
    CHECK(transition_outcome_parse("resuming", &by) == TRANSITION_REFUSED &&
          by == SANDBOX_STATE_RESUMING);
    CHECK(transition_outcome_parse("stopping", &by) == TRANSITION_REFUSED &&
          by == SANDBOX_STATE_UNKNOWN);
    CHECK(transition_outcome_parse(NULL, &by) == TRANSITION_REFUSED && by == SANDBOX_STATE_UNKNOWN);
    CHECK(orphan_decision_parse("replace") == ORPHAN_REPLACE &&
          orphan_decision_parse("lost") == ORPHAN_LOST &&
          orphan_decision_parse("skip") == ORPHAN_SKIP &&
          orphan_decision_parse(NULL) == ORPHAN_SKIP &&
          orphan_decision_parse("other") == ORPHAN_SKIP &&
          !strcmp(orphan_decision_name(ORPHAN_REPLACE), "replace"));
    CHECK(sandbox_reported_parse("running") == SANDBOX_REPORTED_RUNNING &&
          sandbox_reported_parse("paused") == SANDBOX_REPORTED_PAUSED &&
          sandbox_reported_parse("exited") == SANDBOX_REPORTED_EXITED &&
          sandbox_reported_parse("failed") == SANDBOX_REPORTED_FAILED &&
          sandbox_reported_parse("missing") == SANDBOX_REPORTED_MISSING &&
          sandbox_reported_parse("pending") == SANDBOX_REPORTED_UNKNOWN &&
          !strcmp(sandbox_reported_name(SANDBOX_REPORTED_MISSING), "missing"));
    CHECK(report_outcome_parse("started") == REPORT_STARTED &&
          report_outcome_parse("stopped") == REPORT_STOPPED &&
          report_outcome_parse("kill") == REPORT_KILL &&
          report_outcome_parse("paused") == REPORT_PAUSED &&
          report_outcome_parse("resumed") == REPORT_RESUMED &&
          report_outcome_parse("ignored") == REPORT_IGNORED &&
          report_outcome_parse(NULL) == REPORT_IGNORED);
}

void unit_sandbox_fields(int *total_passed, int *total_failed)
{
    test_create_pairs();
    test_create_flags();
    test_round_trip();
    test_states();
    test_outcomes();
    *total_passed += passed;
    *total_failed += failed;
}
