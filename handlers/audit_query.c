#include "audit_query.h"

#include "e2b_list_query.h"
#include "token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A query value: 1 given, 0 absent or empty (the default), -1 unreadable. */
static int given(const struct request *req, const char *name, char *out, size_t outlen)
{
    int r = request_query_strict(req, name, out, outlen);

    return r > 0 && !*out ? 0 : r;
}

static int bad(char *err, size_t errlen, const char *name, const char *rule)
{
    snprintf(err, errlen, "%s: %s", name, rule);
    return -1;
}

/* Event names are lowercase words joined by "_" (audit.h). */
static int is_event_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if ((*s < 'a' || *s > 'z') && *s != '_')
            return 0;
    return 1;
}

static int is_actor(const char *s)
{
    if (strcmp(s, AUDIT_ACTOR_SCHEDULER) == 0 || strcmp(s, AUDIT_ACTOR_OPERATOR) == 0)
        return 1;
    if (strncmp(s, "key:", 4) == 0)
        return token_is_id(s + 4);
    return strncmp(s, "worker:", 7) == 0 && token_is_id(s + 7);
}

/* ms since the epoch (digits) or an RFC 3339 date-time. 0, or -1. */
static int parse_when(const char *text, long long *ms)
{
    char *end;

    if (*text >= '0' && *text <= '9' && strlen(text) <= 15) {
        *ms = strtoll(text, &end, 10);
        if (*end == '\0')
            return 0;
    }
    return e2b_parse_time(text, ms) == 0 && *ms >= 0 ? 0 : -1;
}

static int parse_limit(const struct request *req, struct audit_query *q, char *err, size_t errlen)
{
    char v[16], *end;
    int r = given(req, "limit", v, sizeof(v));
    long n;

    q->limit = AUDIT_LIMIT_DEFAULT;
    if (r == 0)
        return 0;
    n = r > 0 ? strtol(v, &end, 10) : 0;
    if (r < 0 || end == v || *end || n < 1 || n > AUDIT_LIMIT_MAX)
        return bad(err, errlen, "limit", "must be an integer in [1, 1000]");
    q->limit = (int)n;
    return 0;
}

static int parse_filters(const struct request *req, struct audit_query *q, char *err, size_t errlen)
{
    int r;

    r = given(req, "sandbox", q->sandbox, sizeof(q->sandbox));
    if (r < 0 || (r > 0 && !token_is_id(q->sandbox)))
        return bad(err, errlen, "sandbox", "must be a sandbox id (1 to 32 lowercase hex digits)");
    r = given(req, "event", q->event, sizeof(q->event));
    if (r < 0 || (r > 0 && !is_event_name(q->event)))
        return bad(err, errlen, "event", "must be an event name such as \"killed\" (a-z and _)");
    r = given(req, "actor", q->actor, sizeof(q->actor));
    if (r < 0 || (r > 0 && !is_actor(q->actor)))
        return bad(err, errlen, "actor",
                   "must be key:<key id>, worker:<worker id>, scheduler or operator");
    return 0;
}

static int parse_range(const struct request *req, struct audit_query *q, char *err, size_t errlen)
{
    char v[64];
    unsigned long long ms, seq;
    int r;

    r = given(req, "since", v, sizeof(v));
    if (r < 0 || (r > 0 && parse_when(v, &q->since_ms) != 0))
        return bad(err, errlen, "since", "must be ms since the epoch or an RFC 3339 date-time");
    r = given(req, "until", v, sizeof(v));
    if (r < 0 || (r > 0 && parse_when(v, &q->until_ms) != 0))
        return bad(err, errlen, "until", "must be ms since the epoch or an RFC 3339 date-time");
    if (q->until_ms > 0 && q->until_ms < q->since_ms)
        return bad(err, errlen, "until", "must not be before since");
    r = given(req, "cursor", q->after, sizeof(q->after));
    if (r < 0 || (r > 0 && audit_id_parse(q->after, &ms, &seq) != 0))
        return bad(err, errlen, "cursor", "must be the \"next\" of a previous page");
    return 0;
}

int audit_query_parse(const struct request *req, struct audit_query *q, char *err, size_t errlen)
{
    memset(q, 0, sizeof(*q));
    if (parse_limit(req, q, err, errlen) != 0 || parse_filters(req, q, err, errlen) != 0)
        return -1;
    return parse_range(req, q, err, errlen);
}
