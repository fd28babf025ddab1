/* rsentinel.c: finding the Redis primary through Sentinel (see rsentinel.h). */
#include "rsentinel.h"

#include "log.h"
#include "rconn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A sentinel that does not answer this fast is skipped for the next one. */
#define SENTINEL_TIMEOUT_MS 500

int sentinel_entry(const char *list, unsigned i, char *host, size_t hostlen, int *port)
{
    const char *p = list, *end, *colon, *hs, *he;
    char *stop;
    long n;

    for (; i > 0 && p; i--)
        if ((p = strchr(p, ',')) != NULL)
            p++;
    if (!p)
        return -1;
    p += strspn(p, " ");
    end = p + strcspn(p, ", ");
    colon = end;
    while (colon > p && colon[-1] != ':')
        colon--;
    if (colon <= p + 1)
        return -1; /* no ':', or nothing before it */
    n = strtol(colon, &stop, 10);
    if (stop != end || n < 1 || n > 65535)
        return -1;
    hs = p;
    he = colon - 1;   /* the ':' */
    if (*hs == '[') { /* [v6]:port */
        if (he - hs < 3 || he[-1] != ']')
            return -1;
        hs++;
        he--;
    }
    if (he == hs || (size_t)(he - hs) >= hostlen)
        return -1;
    memcpy(host, hs, (size_t)(he - hs));
    host[he - hs] = '\0';
    *port = (int)n;
    return 0;
}

static unsigned entries(const char *list)
{
    unsigned n = 1;

    for (const char *p = list; (p = strchr(p, ',')) != NULL; p++)
        n++;
    return n;
}

/* One sentinel's answer: 0 with host and port, or -1. */
static int ask(const struct rconn *rc, const char *shost, int sport, char *host, size_t hostlen,
               int *port)
{
    struct timeval tv = {.tv_sec = 0, .tv_usec = SENTINEL_TIMEOUT_MS * 1000};
    redisContext *s = redisConnectWithTimeout(shost, sport, tv);
    redisReply *r = NULL;
    int found = -1;

    if (!s || s->err)
        goto out;
    redisSetTimeout(s, tv);
    if (rc->sentinel_password) {
        r = redisCommand(s, "AUTH %s", rc->sentinel_password);
        if (!r || r->type == REDIS_REPLY_ERROR)
            goto out;
        freeReplyObject(r);
    }
    r = redisCommand(s, "SENTINEL get-master-addr-by-name %s", rc->master_name);
    if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING &&
        strlen(r->element[0]->str) < hostlen) {
        snprintf(host, hostlen, "%s", r->element[0]->str);
        *port = atoi(r->element[1]->str);
        found = *port > 0 ? 0 : -1;
    }
out:
    if (r)
        freeReplyObject(r);
    if (s)
        redisFree(s);
    return found;
}

int sentinel_primary(struct rconn *rc, char *host, size_t hostlen, int *port)
{
    unsigned n = entries(rc->sentinels);

    for (unsigned k = 0; k < n; k++) {
        unsigned i = (rc->sentinel_next + k) % n;
        char shost[256];
        int sport;

        if (sentinel_entry(rc->sentinels, i, shost, sizeof(shost), &sport) == 0 &&
            ask(rc, shost, sport, host, hostlen, port) == 0) {
            rc->sentinel_next = i;
            return 0;
        }
    }
    log_err("redis: no sentinel named the primary of %s", rc->master_name);
    return -1;
}

int check_primary(struct rconn *rc)
{
    redisReply *r = redisCommand(rc->ctx, "ROLE");
    int ok = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
             r->element[0]->type == REDIS_REPLY_STRING && strcmp(r->element[0]->str, "master") == 0;

    if (r)
        freeReplyObject(r);
    if (ok)
        return 0;
    log_err("redis: the node the sentinels named is not a primary (yet); asking again");
    rconn_close(rc);
    return -1;
}
