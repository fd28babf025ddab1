/* policy.c: parsing is strict (unknown keys, non-strings and unparseable
 * entries are refused, naming the entry) because a typo in a deny list that
 * was silently ignored would open the sandbox. An entry is read by
 * common/egress_rule.c, as corral-api read it when the policy was set. */
#include "policy.h"

#include "egress_rule.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int entry_parse(const char *s, struct pentry *e)
{
    struct egress_rule r;

    memset(e, 0, sizeof(*e));
    if (egress_rule_parse(s, &r) != 0)
        return -1;
    if (r.kind == EGRESS_RULE_CIDR) {
        e->kind = PE_CIDR;
        ipaddr_from_rule(&r, &e->net, &e->bits); /* folds ::ffff:a.b.c.d */
        return 0;
    }
    if (r.kind == EGRESS_RULE_WILDCARD) {
        e->kind = PE_WILDCARD;
        e->name[0] = '.';
        return hostname_normalize(s + 2, e->name + 1);
    }
    e->kind = PE_NAME;
    return hostname_normalize(s, e->name);
}

static int list_parse(json_t *arr, const char *key, struct plist *l, bool *deny_all, char *err,
                      size_t errlen)
{
    if (l->e) {
        snprintf(err, errlen, "policy: \"%s\" twice", key);
        return -1;
    }
    if (!json_is_array(arr)) {
        snprintf(err, errlen, "policy: \"%s\" must be an array of strings", key);
        return -1;
    }
    l->n = json_array_size(arr);
    if (l->n > EGRESS_RULE_MAX_LIST) {
        snprintf(err, errlen, "policy: \"%s\" has more than %d entries", key, EGRESS_RULE_MAX_LIST);
        return -1;
    }
    l->e = calloc(l->n ? l->n : 1, sizeof(*l->e));
    if (!l->e) {
        snprintf(err, errlen, "policy: out of memory");
        return -1;
    }
    for (size_t i = 0; i < l->n; i++) {
        const char *s = json_string_value(json_array_get(arr, i));
        if (!s || entry_parse(s, &l->e[i]) != 0) {
            snprintf(err, errlen,
                     "policy: \"%s\"[%zu] is not a host name, *.wildcard, IP address or CIDR", key,
                     i);
            return -1;
        }
        if (deny_all && l->e[i].kind == PE_CIDR && l->e[i].bits == 0)
            *deny_all = true;
    }
    return 0;
}

int policy_list_parse(json_t *arr, const char *key, struct policy *p, char *err, size_t errlen)
{
    if (strcmp(key, "allow") == 0)
        return list_parse(arr, key, &p->allow, NULL, err, errlen);
    return list_parse(arr, key, &p->deny, &p->deny_all, err, errlen);
}

int policy_parse(const char *json, struct policy *p, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    const char *key;
    json_t *val;
    int rc = 0;

    memset(p, 0, sizeof(*p));
    if (!json_is_object(root)) {
        snprintf(err, errlen, "policy: not a JSON object (%s)", root ? "wrong type" : jerr.text);
        json_decref(root);
        return -1;
    }
    json_object_foreach(root, key, val)
    {
        if (strcmp(key, "allow") == 0 || strcmp(key, "deny") == 0)
            rc = policy_list_parse(val, key, p, err, errlen);
        else {
            snprintf(err, errlen, "policy: unknown key \"%.64s\" (only allow, deny)", key);
            rc = -1;
        }
        if (rc != 0)
            break;
    }
    json_decref(root);
    if (rc != 0)
        policy_free(p);
    return rc;
}

void policy_free(struct policy *p)
{
    free(p->allow.e);
    free(p->deny.e);
    memset(p, 0, sizeof(*p));
}

static bool name_matches(const struct pentry *e, const char *name)
{
    if (e->kind == PE_NAME)
        return strcmp(e->name, name) == 0;
    size_t nl = strlen(name), sl = strlen(e->name);
    /* Strictly longer: "*.example.com" does not match the apex. */
    return nl > sl && strcmp(name + nl - sl, e->name) == 0;
}

bool policy_name_in(const struct plist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->e[i].kind != PE_CIDR && name_matches(&l->e[i], name))
            return true;
    return false;
}

bool policy_addr_in(const struct plist *l, const struct ipaddr *a)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->e[i].kind == PE_CIDR && ipaddr_in_prefix(a, &l->e[i].net, l->e[i].bits))
            return true;
    return false;
}

bool policy_has_cidr(const struct plist *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->e[i].kind == PE_CIDR)
            return true;
    return false;
}
