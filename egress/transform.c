#include "transform.h"

#include "http_edit.h"
#include "placeholder.h"
#include "resolver.h"
#include "transform_audit.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REFS_MAX (RULE_HEADERS_MAX * PH_REFS_MAX)

static const char *lookup(void *ctx, enum ph_kind kind, const char *name)
{
    return ctx ? resolver_value(ctx, kind, name) : NULL;
}

static void say_unresolved(char *msg, size_t msglen, const struct ph_ref *r, const char *host,
                           const char *why)
{
    snprintf(msg, msglen,
             "corral egress: placeholder ${e2b.%s%s} for %s could not be resolved (%s)",
             r->kind == PH_SECRET ? "secrets." : "identity.tokens.", r->name, host, why);
}

/* Every placeholder of the set's values, in order; their number. */
static size_t collect(const struct rule_set *set, struct ph_ref *refs)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        int k = ph_scan(set->h[i].value, refs + n, REFS_MAX - n);
        n += k > 0 ? (size_t)k : 0; /* values were checked when parsed */
    }
    return n;
}

static void wipe(char **values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (values[i]) {
            OPENSSL_cleanse(values[i], strlen(values[i]));
            free(values[i]);
        }
}

/* values[i]: set->h[i]'s value expanded; -1 with msg at the first failure. */
static int expand_all(const struct rule_set *set, json_t *answer, const char *host, char **values,
                      char *msg, size_t msglen)
{
    for (size_t i = 0; i < set->n; i++) {
        struct ph_ref missing;
        values[i] = ph_expand(set->h[i].value, lookup, answer, &missing);
        if (!values[i]) {
            if (missing.name[0])
                say_unresolved(msg, msglen, &missing, host, "not in the resolver's answer");
            else
                snprintf(msg, msglen, "corral egress: out of memory");
            return -1;
        }
    }
    return 0;
}

int transform_head(const struct rule_set *set, const char *resolver, const char *host,
                   const char *head, size_t head_len, char **out, size_t *out_len, char *msg,
                   size_t msglen)
{
    struct ph_ref *refs = malloc(REFS_MAX * sizeof(*refs));
    char *values[RULE_HEADERS_MAX] = {0}, why[128];
    const char *names[RULE_HEADERS_MAX];
    json_t *answer = NULL;
    int rc = -1;

    if (!refs) {
        snprintf(msg, msglen, "corral egress: out of memory");
        return -1;
    }
    size_t n = collect(set, refs);
    if (n && !(answer = resolver_ask(resolver, host, refs, n, why, sizeof(why)))) {
        say_unresolved(msg, msglen, &refs[0], host, why);
        goto done;
    }
    if (expand_all(set, answer, host, values, msg, msglen) != 0)
        goto done;
    for (size_t i = 0; i < set->n; i++)
        names[i] = set->h[i].name;
    *out = http_head_set(head, head_len, names, (const char *const *)values, set->n, out_len);
    if (!*out)
        snprintf(msg, msglen, "corral egress: out of memory");
    rc = *out ? 0 : -1;
done:
    wipe(values, set->n);
    json_decref(answer);
    free(refs);
    return rc;
}

void transform_log(const char *sandbox, const char *host, const char *method,
                   const struct rule_set *set)
{
    char names[RULE_HEADERS_MAX * (RULE_NAME_MAX + 1) + 1];
    size_t len = 0;

    names[0] = '\0';
    for (size_t i = 0; i < set->n; i++)
        len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? "," : "",
                                set->h[i].name);
    fprintf(stderr, "egress sandbox=%s transform %s %s headers=%s\n", sandbox, host, method, names);
    transform_audit_note(host, set);
}
