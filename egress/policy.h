/* policy.h: a sandbox's egress policy, {"allow": [...], "deny": [...]}, and
 * the matching of one name or one address against it. Pure. */
#ifndef CORRAL_EGRESS_POLICY_H
#define CORRAL_EGRESS_POLICY_H

#include "hostname.h"
#include "ipaddr.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum pentry_kind { PE_NAME, PE_WILDCARD, PE_CIDR };

struct pentry {
    enum pentry_kind kind;
    char name[HOSTNAME_MAX + 2]; /* PE_NAME: the name; PE_WILDCARD: ".suffix" */
    struct ipaddr net;           /* PE_CIDR */
    int bits;
};

struct plist {
    struct pentry *e;
    size_t n;
};

struct policy {
    struct plist allow, deny;
    /* 0.0.0.0/0 or ::/0 in deny: refuse every address not allowed, of both
     * families, so an AAAA record is no way around E2B's ALL_TRAFFIC. */
    bool deny_all;
};

int policy_parse(const char *json, struct policy *p, char *err, size_t errlen);
/* One list of a policy object: key is "allow" or "deny", arr its value. */
int policy_list_parse(json_t *arr, const char *key, struct policy *p, char *err, size_t errlen);
void policy_free(struct policy *p);

/* `name` must already be hostname_normalize()d. */
bool policy_name_in(const struct plist *l, const char *name);
bool policy_addr_in(const struct plist *l, const struct ipaddr *a);
bool policy_has_cidr(const struct plist *l);

#endif
