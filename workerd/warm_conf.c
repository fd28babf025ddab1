#include "warm_conf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A template or runtime name: what a container label and a name may carry. */
static int name_ok(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '-' || s[i] == '_' || s[i] == '.' || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

static int item(const char *s, size_t len, struct warm_kind *k, char *err, size_t errlen)
{
    const char *eq = memchr(s, '=', len), *colon;
    size_t tlen, rlen;
    char num[8], *end;
    long v;

    if (!eq || (size_t)(s + len - eq - 1) >= sizeof(num) || eq == s + len - 1) {
        snprintf(err, errlen, "warm_pool: '%.*s' is not template[:runtime]=N", (int)len, s);
        return -1;
    }
    memcpy(num, eq + 1, (size_t)(s + len - eq - 1));
    num[s + len - eq - 1] = '\0';
    v = strtol(num, &end, 10);
    if (*end || num[0] < '0' || num[0] > '9' || v > WARM_SIZE_MAX) {
        snprintf(err, errlen, "warm_pool: size '%s' is not 0 to %d", num, WARM_SIZE_MAX);
        return -1;
    }
    colon = memchr(s, ':', (size_t)(eq - s));
    tlen = (size_t)((colon ? colon : eq) - s);
    rlen = colon ? (size_t)(eq - colon - 1) : 4;
    if (!name_ok(s, tlen) || tlen >= sizeof(k->tmpl) || (colon && !name_ok(colon + 1, rlen)) ||
        rlen >= sizeof(k->runtime)) {
        snprintf(err, errlen, "warm_pool: '%.*s' names no template[:runtime]", (int)len, s);
        return -1;
    }
    snprintf(k->tmpl, sizeof(k->tmpl), "%.*s", (int)tlen, s);
    snprintf(k->runtime, sizeof(k->runtime), "%.*s", (int)rlen, colon ? colon + 1 : "runc");
    k->size = (int)v;
    return 0;
}

static int known(const struct warm_kind *out, int n, const struct warm_kind *k)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(out[i].tmpl, k->tmpl) && !strcmp(out[i].runtime, k->runtime))
            return 1;
    return 0;
}

int warm_conf_parse(const char *s, struct warm_kind out[WARM_KINDS_MAX], int *n, char *err,
                    size_t errlen)
{
    *n = 0;
    while (*s) {
        size_t len;
        struct warm_kind k;
        s += strspn(s, " \t,");
        len = strcspn(s, " \t,");
        if (len == 0)
            break;
        if (item(s, len, &k, err, errlen) < 0)
            return -1;
        if (known(out, *n, &k)) {
            snprintf(err, errlen, "warm_pool: %s:%s is listed twice", k.tmpl, k.runtime);
            return -1;
        }
        if (*n == WARM_KINDS_MAX) {
            snprintf(err, errlen, "warm_pool: more than %d items", WARM_KINDS_MAX);
            return -1;
        }
        if (k.size > 0)
            out[(*n)++] = k;
        s += len;
    }
    return 0;
}
