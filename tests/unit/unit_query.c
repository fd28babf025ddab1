/* Unit tests of query parsing: handlers/request.c's request_query (one
 * parameter, URL-decoded) and handlers/e2b_list_query.c (the filters, order,
 * limit and nextToken of GET /v2/sandboxes, their refusals, the RFC 3339
 * times, the sort order and the cursor). */
#include "audit_query.h"
#include "check.h"
#include "e2b_list_query.h"
#include "request.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

void unit_query(int *total_passed, int *total_failed);

static int passed, failed;

/* 1 when name is found in query with exactly the value want (NULL: absent). */
static int query_is(const char *query, const char *name, const char *want)
{
    struct request req = {.query = query};
    char out[32] = "unset";
    int found = request_query(&req, name, out, sizeof(out));

    return want ? found == 1 && strcmp(out, want) == 0 : found == 0;
}

static void test_request_query(void)
{
    const char *q = "a=1&b=x%20y+z&c&d=&ab=2&e=%2F%3F%26";

    CHECK(query_is(q, "a", "1"));
    CHECK(query_is(q, "b", "x y z")); /* %20 and + are both a space */
    CHECK(query_is(q, "c", ""));      /* a bare name is present and empty */
    CHECK(query_is(q, "d", ""));
    CHECK(query_is(q, "ab", "2")); /* not taken for a= */
    CHECK(query_is(q, "e", "/?&"));
    CHECK(query_is(q, "f", NULL));
    CHECK(query_is(q, "", NULL));
    CHECK(query_is("", "a", NULL));
    CHECK(query_is("a=1&a=2", "a", "1")); /* the first one counts */
    CHECK(query_is("ab=1", "a", NULL));
    CHECK(query_is("&&a=1&", "a", "1"));
    /* badly encoded or too long for out: not found (e2b_list_query says why) */
    CHECK(query_is("a=%zz", "a", NULL));
    CHECK(query_is("a=%2", "a", NULL));
    /* out holds 31 characters and the NUL: 31 fit, 32 do not */
    CHECK(query_is("a=0123456789012345678901234567890", "a", "0123456789012345678901234567890"));
    CHECK(query_is("a=01234567890123456789012345678901", "a", NULL));
}

static void test_parse_time(void)
{
    long long ms = 0;

    CHECK(e2b_parse_time("2024-05-01T10:00:00Z", &ms) == 0 && ms == 1714557600000LL);
    CHECK(e2b_parse_time("2024-05-01t10:00:00z", &ms) == 0 && ms == 1714557600000LL);
    CHECK(e2b_parse_time("2024-05-01T10:00:00.123+02:00", &ms) == 0 && ms == 1714550400123LL);
    CHECK(e2b_parse_time("2024-05-01T10:00:00.5-01:30", &ms) == 0 &&
          ms == 1714557600000LL + 5400000 + 500);
    CHECK(e2b_parse_time("1970-01-01T00:00:00Z", &ms) == 0 && ms == 0);
    CHECK(e2b_parse_time("1970-01-01T00:00:00.999999Z", &ms) == 0 && ms == 999);
    ms = 42;
    CHECK(e2b_parse_time("2024-05-01", &ms) == -1 && ms == 42);
    CHECK(e2b_parse_time("2024-05-01T10:00:00", &ms) == -1); /* no zone */
    CHECK(e2b_parse_time("2024-05-01 10:00:00Z", &ms) == -1);
    CHECK(e2b_parse_time("2024-13-01T10:00:00Z", &ms) == -1);
    CHECK(e2b_parse_time("2024-05-32T10:00:00Z", &ms) == -1);
    CHECK(e2b_parse_time("2024-05-01T24:00:00Z", &ms) == -1);
    CHECK(e2b_parse_time("2024-05-01T10:60:00Z", &ms) == -1);
    CHECK(e2b_parse_time("2024-05-01T10:00:00.Z", &ms) == -1);
    CHECK(e2b_parse_time("2024-05-01T10:00:00+2:00", &ms) == -1);
    CHECK(e2b_parse_time("2024-05-01T10:00:00+02:00x", &ms) == -1);
    CHECK(e2b_parse_time("2024-05-01T10:00:00+24:00", &ms) == -1);
    CHECK(e2b_parse_time("2024-5-01T10:00:00Z", &ms) == -1);
    CHECK(e2b_parse_time("", &ms) == -1);
}

/* Parses query; 0 with q, or -1 with err starting with prefix. */
static int parse(const char *query, int paginate, struct e2b_list_query *q, const char *prefix)
{
    struct request req = {.query = query};
    char err[256] = "";
    int rv = e2b_list_query_parse(&req, paginate, q, err, sizeof(err));

    if (rv != 0 && prefix && strncmp(err, prefix, strlen(prefix)) != 0) {
        fprintf(stderr, "query \"%s\": error \"%s\", expected \"%s...\"\n", query, err, prefix);
        return 1;
    }
    return rv;
}

static int refused(const char *query, const char *prefix)
{
    struct e2b_list_query q;

    return parse(query, 1, &q, prefix) == -1;
}

static void test_list_query(void)
{
    struct e2b_list_query q;
    char big[300];

    CHECK(parse("", 1, &q, NULL) == 0 && q.want_running && !q.ascending &&
          q.started_after == LLONG_MIN && q.limit == E2B_LIST_LIMIT_MAX && !q.has_cursor &&
          !q.metadata[0] && !q.template_name[0]);
    /* the deprecated route: no pagination, only metadata is read */
    CHECK(parse("limit=0&order=sideways&metadata=k%3Dv", 0, &q, NULL) == 0 && q.limit == SIZE_MAX &&
          !strcmp(q.metadata, "k=v"));
    CHECK(parse("metadata=a%3Db%26c%3Dd", 1, &q, NULL) == 0 && !strcmp(q.metadata, "a=b&c=d"));
    CHECK(parse("state=paused", 1, &q, NULL) == 0 && q.want_running == 0 && q.want_paused == 1);
    CHECK(parse("state=running", 1, &q, NULL) == 0 && q.want_running == 1 && q.want_paused == 0);
    CHECK(parse("state=running,paused", 1, &q, NULL) == 0 && q.want_running == 1 &&
          q.want_paused == 1);
    CHECK(parse("state=paused,running", 1, &q, NULL) == 0 && q.want_running == 1 &&
          q.want_paused == 1);
    CHECK(parse("order=asc", 1, &q, NULL) == 0 && q.ascending == 1);
    CHECK(parse("order=desc", 1, &q, NULL) == 0 && q.ascending == 0);
    CHECK(parse("order=", 1, &q, NULL) == 0 && q.ascending == 0); /* empty: the default */
    CHECK(parse("limit=1", 1, &q, NULL) == 0 && q.limit == 1);
    CHECK(parse("limit=100", 1, &q, NULL) == 0 && q.limit == 100);
    CHECK(parse("startedAfter=2024-05-01T10:00:00Z", 1, &q, NULL) == 0 &&
          q.started_after == 1714557600000LL);
    CHECK(parse("startedAfter=2024-05-01T12:00:00%2B02:00", 1, &q, NULL) == 0 &&
          q.started_after == 1714557600000LL); /* "+" must be sent as %2B */
    CHECK(parse("template=base", 1, &q, NULL) == 0 && !strcmp(q.template_name, "base"));
    CHECK(parse("nextToken=1714557600000-ab12", 1, &q, NULL) == 0 && q.has_cursor &&
          q.cursor_started == 1714557600000LL && !strcmp(q.cursor_id, "ab12"));

    /* refusals name the parameter */
    CHECK(refused("metadata=%zz", "metadata: "));
    memset(big, 'a', sizeof(big));
    memcpy(big, "state=", 6);
    big[sizeof(big) - 1] = '\0';
    CHECK(refused(big, "state: "));
    CHECK(refused("state=stopped", "state: must be a comma-separated list of running, paused"));
    CHECK(refused("state=running,", "state: ") == 0); /* an empty item is skipped */
    CHECK(refused("state=Running", "state: "));
    CHECK(refused("order=up", "order: must be asc or desc"));
    CHECK(refused("order=ASC", "order: "));
    CHECK(refused("order=%zz", "order: "));
    CHECK(refused("startedAfter=yesterday", "startedAfter: must be an RFC 3339 date-time"));
    CHECK(refused("startedAfter=2024-05-01T12:00:00+02:00", "startedAfter: ")); /* + is a space */
    CHECK(refused("limit=0", "limit: must be an integer in [1, 100]"));
    CHECK(refused("limit=101", "limit: "));
    CHECK(refused("limit=-1", "limit: "));
    CHECK(refused("limit=5x", "limit: "));
    CHECK(refused("limit=%35", "limit: ") == 0); /* "5", URL-encoded */
    CHECK(refused("nextToken=garbage", "nextToken: not a token this API returned"));
    CHECK(refused("nextToken=123", "nextToken: "));
    CHECK(refused("nextToken=123-", "nextToken: "));
    CHECK(refused("nextToken=123-AB12", "nextToken: ")); /* ids are lowercase hex */
    CHECK(refused("nextToken=123-../x", "nextToken: "));
    CHECK(refused("nextToken=x-ab12", "nextToken: "));
    memset(big, 'a', sizeof(big));
    memcpy(big, "template=", 9);
    big[9 + 128] = '\0'; /* 128 characters: one too many */
    CHECK(refused(big, "template: must be at most 127 characters"));
    big[9 + 127] = '\0';
    CHECK(refused(big, "template: ") == 0);
}

static void test_order_and_cursor(void)
{
    struct e2b_list_query q;
    struct e2b_listed_key old = {1000, "bb"}, young = {2000, "aa"}, twin = {2000, "ab"};
    char tok[64];

    CHECK(parse("", 1, &q, NULL) == 0);
    /* newest first by default; ties broken by id, so the order is total */
    CHECK(e2b_listed_cmp(&q, &young, &old) < 0 && e2b_listed_cmp(&q, &old, &young) > 0);
    CHECK(e2b_listed_cmp(&q, &twin, &young) < 0 && e2b_listed_cmp(&q, &young, &young) == 0);
    CHECK(e2b_after_cursor(&q, &old)); /* no cursor: everything comes after it */
    e2b_cursor_format(&young, tok, sizeof(tok));
    CHECK(strcmp(tok, "2000-aa") == 0);
    snprintf(tok, sizeof(tok), "nextToken=2000-aa");
    CHECK(parse(tok, 1, &q, NULL) == 0 && q.has_cursor);
    CHECK(!e2b_after_cursor(&q, &young)); /* the last item sent is not sent again */
    CHECK(!e2b_after_cursor(&q, &twin));  /* (2000, ab) came before (2000, aa) */
    CHECK(e2b_after_cursor(&q, &old));
    snprintf(tok, sizeof(tok), "order=asc&nextToken=2000-aa");
    CHECK(parse(tok, 1, &q, NULL) == 0 && q.ascending);
    CHECK(e2b_listed_cmp(&q, &old, &young) < 0);
    CHECK(!e2b_after_cursor(&q, &old) && !e2b_after_cursor(&q, &young));
    CHECK(e2b_after_cursor(&q, &twin));
}

/* 1 when query parses (q filled), 0 when refused with err starting "param: ". */
static int audit_parses(const char *query, struct audit_query *q, const char *param)
{
    struct request req = {.query = query};
    char err[200] = "", want[64];
    int rv = audit_query_parse(&req, q, err, sizeof(err));

    snprintf(want, sizeof(want), "%s: ", param ? param : "");
    if (param)
        return rv == -1 && strncmp(err, want, strlen(want)) == 0;
    return rv == 0 && err[0] == '\0';
}

static void test_audit_query(void)
{
    struct audit_query q;
    unsigned long long ms, seq;

    CHECK(audit_parses("", &q, NULL) && q.limit == 100 && !*q.sandbox && !*q.event && !*q.actor &&
          q.since_ms == 0 && q.until_ms == 0 && !*q.after);
    CHECK(audit_parses("limit=1000&sandbox=ab12&event=timed_out&actor=key%3Aff01&since=5&"
                       "until=2024-05-01T10:00:00.250Z&cursor=1714557600250-3",
                       &q, NULL));
    CHECK(q.limit == 1000 && strcmp(q.sandbox, "ab12") == 0 && strcmp(q.event, "timed_out") == 0 &&
          strcmp(q.actor, "key:ff01") == 0 && q.since_ms == 5 && q.until_ms == 1714557600250LL &&
          strcmp(q.after, "1714557600250-3") == 0);
    CHECK(audit_parses("actor=scheduler&limit=&event=", &q, NULL) && q.limit == 100);
    CHECK(audit_parses("actor=worker:0a", &q, NULL) && audit_parses("actor=operator", &q, NULL));
    CHECK(audit_parses("limit=0", &q, "limit") && audit_parses("limit=1001", &q, "limit") &&
          audit_parses("limit=1x", &q, "limit") && audit_parses("limit=%zz", &q, "limit"));
    CHECK(audit_parses("sandbox=AB", &q, "sandbox") && audit_parses("sandbox=a/b", &q, "sandbox"));
    CHECK(audit_parses("event=Killed", &q, "event") && audit_parses("event=a-b", &q, "event"));
    CHECK(audit_parses("actor=key:", &q, "actor") && audit_parses("actor=root", &q, "actor") &&
          audit_parses("actor=worker:XY", &q, "actor"));
    CHECK(audit_parses("since=-1", &q, "since") && audit_parses("since=1e3", &q, "since") &&
          audit_parses("until=tomorrow", &q, "until"));
    CHECK(audit_parses("since=20&until=10", &q, "until"));
    CHECK(audit_parses("cursor=1-", &q, "cursor") && audit_parses("cursor=x-1", &q, "cursor") &&
          audit_parses("cursor=1-2-3", &q, "cursor"));
    /* stream ids: digits, "-", digits, nothing else */
    CHECK(audit_id_parse("1714557600250-3", &ms, &seq) == 0 && ms == 1714557600250ULL && seq == 3);
    CHECK(audit_id_parse("0-0", &ms, &seq) == 0 && ms == 0 && seq == 0);
    CHECK(audit_id_parse("-1-0", &ms, &seq) == -1 && audit_id_parse("1", &ms, &seq) == -1 &&
          audit_id_parse("1-+2", &ms, &seq) == -1 && audit_id_parse("", &ms, &seq) == -1 &&
          audit_id_parse("123456789012345678901-0", &ms, &seq) == -1);
}

void unit_query(int *total_passed, int *total_failed)
{
    test_request_query();
    test_audit_query();
    test_parse_time();
    test_list_query();
    test_order_and_cursor();
    *total_passed += passed;
    *total_failed += failed;
}
