#include "e2b_list_query.h"

#include "sandbox_codec.h"
#include "token.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return -1;
}

/* "Z" or "+HH:MM" as seconds east of UTC, or -1 (never a valid offset: the
 * minutes of an offset are whole). */
static long zone_offset(const char *z)
{
    int hh, mm, used = 0;

    if (strcmp(z, "Z") == 0 || strcmp(z, "z") == 0)
        return 0;
    if ((z[0] != '+' && z[0] != '-') || sscanf(z + 1, "%2d:%2d%n", &hh, &mm, &used) != 2 ||
        used != 5 || z[6] != '\0' || hh > 23 || mm > 59)
        return -1;
    return (z[0] == '-' ? -1L : 1L) * (hh * 3600L + mm * 60L);
}

int e2b_parse_time(const char *text, long long *ms)
{
    struct tm tm = {0};
    int y, mo, d, h, mi, s, used = 0;
    long long frac_ms = 0, scale = 100;
    const char *p;
    long off;

    if (sscanf(text, "%4d-%2d-%2d%*[Tt]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &used) != 6 ||
        used != 19 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        return -1;
    p = text + used;
    if (*p == '.') {
        if (!isdigit((unsigned char)p[1]))
            return -1;
        for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
            frac_ms += (*p - '0') * scale;
    }
    if (!*p || (off = zone_offset(p)) == -1)
        return -1;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    *ms = ((long long)timegm(&tm) - off) * 1000 + frac_ms;
    return 0;
}

/* state: a comma list of running, paused (style form, explode false). */
static int parse_state(const char *state, int *running, int *paused)
{
    char buf[64], *save = NULL, *s;

    *running = *paused = !*state;
    snprintf(buf, sizeof(buf), "%s", state);
    for (s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        enum sandbox_state named = sandbox_state_parse(s); /* E2B's two are the record's words */
        if (named == SANDBOX_STATE_RUNNING)
            *running = 1;
        else if (named == SANDBOX_STATE_PAUSED)
            *paused = 1;
        else
            return -1;
    }
    return 0;
}

/* "<started ms>-<sandbox id>", as e2b_cursor_format writes it. */
static int parse_cursor(const char *text, struct e2b_list_query *q)
{
    char *end;

    q->cursor_started = strtoll(text, &end, 10);
    if (end == text || *end != '-' || !token_is_id(end + 1) ||
        strlen(end + 1) >= sizeof(q->cursor_id))
        return -1;
    snprintf(q->cursor_id, sizeof(q->cursor_id), "%s", end + 1);
    q->has_cursor = 1;
    return 0;
}

static int parse_limit(const char *text, size_t *limit)
{
    char *end;
    long v = strtol(text, &end, 10);

    if (end == text || *end || v < 1 || v > E2B_LIST_LIMIT_MAX)
        return -1;
    *limit = (size_t)v;
    return 0;
}

/* A query value: 1 given, 0 absent or empty (the default), -1 unreadable. */
static int given(const struct request *req, const char *name, char *out, size_t outlen)
{
    int r = request_query_strict(req, name, out, outlen);

    return r > 0 && !*out ? 0 : r;
}

/* order, startedAfter, template, limit, nextToken: the /v2 parameters. */
static int parse_v2(const struct request *req, struct e2b_list_query *q, char *err, size_t errlen)
{
    char v[256];
    int r;

    r = given(req, "order", v, sizeof(v));
    if (r < 0 || (r > 0 && strcmp(v, "asc") != 0 && strcmp(v, "desc") != 0))
        return fail(err, errlen, "order: must be asc or desc");
    q->ascending = r > 0 && strcmp(v, "asc") == 0;
    r = given(req, "startedAfter", v, sizeof(v));
    if (r < 0 || (r > 0 && e2b_parse_time(v, &q->started_after) != 0))
        return fail(err, errlen,
                    "startedAfter: must be an RFC 3339 date-time, e.g. 2024-05-01T10:00:00Z");
    if (given(req, "template", q->template_name, sizeof(q->template_name)) < 0)
        return fail(err, errlen, "template: must be at most 127 characters");
    r = given(req, "limit", v, sizeof(v));
    if (r < 0 || (r > 0 && parse_limit(v, &q->limit) != 0))
        return fail(err, errlen, "limit: must be an integer in [1, 100]");
    r = given(req, "nextToken", v, sizeof(v));
    if (r < 0 || (r > 0 && parse_cursor(v, q) != 0))
        return fail(err, errlen, "nextToken: not a token this API returned in X-Next-Token");
    return 0;
}

int e2b_list_query_parse(const struct request *req, int paginate, struct e2b_list_query *q,
                         char *err, size_t errlen)
{
    char state[64] = "";

    memset(q, 0, sizeof(*q));
    q->want_running = q->want_paused = 1;
    q->started_after = LLONG_MIN;
    q->limit = paginate ? E2B_LIST_LIMIT_MAX : SIZE_MAX;
    if (request_query_strict(req, "metadata", q->metadata, sizeof(q->metadata)) < 0)
        return fail(err, errlen, "metadata: must be at most 1023 characters, URL-encoded");
    if (!paginate)
        return 0;
    if (request_query_strict(req, "state", state, sizeof(state)) < 0)
        return fail(err, errlen, "state: must be a comma-separated list of running, paused");
    if (parse_state(state, &q->want_running, &q->want_paused) != 0)
        return fail(err, errlen, "state: must be a comma-separated list of running, paused");
    return parse_v2(req, q, err, errlen);
}

int e2b_listed_cmp(const struct e2b_list_query *q, const struct e2b_listed_key *a,
                   const struct e2b_listed_key *b)
{
    int c = (a->started > b->started) - (a->started < b->started);

    if (c == 0)
        c = strcmp(a->id, b->id);
    return q->ascending ? c : -c;
}

int e2b_after_cursor(const struct e2b_list_query *q, const struct e2b_listed_key *k)
{
    struct e2b_listed_key cursor = {q->cursor_started, q->cursor_id};

    return !q->has_cursor || e2b_listed_cmp(q, k, &cursor) > 0;
}

void e2b_cursor_format(const struct e2b_listed_key *k, char *out, size_t outlen)
{
    snprintf(out, outlen, "%lld-%s", k->started, k->id);
}
