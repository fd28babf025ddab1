#include "decide.h"

#include "addr_class.h"

static bool addr_allowed(const struct policy *p, const struct ipaddr *a)
{
    if (policy_addr_in(&p->allow, a))
        return true;
    return !p->deny_all && !policy_addr_in(&p->deny, a);
}

enum verdict decide_literal(const struct policy *p, const struct ipaddr *a)
{
    if (addr_is_blocked(a))
        return V_DENY_PRIVATE;
    return addr_allowed(p, a) ? V_ALLOW : V_DENY_LITERAL;
}

enum verdict decide_name_early(const struct policy *p, const char *name)
{
    if (policy_name_in(&p->allow, name))
        return V_ALLOW;
    if (policy_name_in(&p->deny, name))
        return V_DENY_NAME;
    if (p->deny_all && !policy_has_cidr(&p->allow))
        return V_DENY_NAME;
    return V_RESOLVE;
}

/* The addresses a name `early` did not refuse may reach, copied to ok. */
static enum verdict keep_allowed(const struct policy *p, enum verdict early,
                                 const struct ipaddr *addrs, size_t n, struct ipaddr *ok,
                                 size_t *n_ok)
{
    for (size_t i = 0; i < n; i++)
        if (early == V_ALLOW || addr_allowed(p, &addrs[i]))
            ok[(*n_ok)++] = addrs[i];
    return *n_ok ? V_ALLOW : V_DENY_NAME;
}

enum verdict decide_name_addrs(const struct policy *p, enum verdict early,
                               const struct ipaddr *addrs, size_t n, struct ipaddr *ok,
                               size_t *n_ok)
{
    *n_ok = 0;
    if (early != V_ALLOW && early != V_RESOLVE)
        return early;
    if (n == 0)
        return V_CANNOT_RESOLVE;
    for (size_t i = 0; i < n; i++)
        if (addr_is_blocked(&addrs[i]))
            return V_DENY_PRIVATE;
    return keep_allowed(p, early, addrs, n, ok, n_ok);
}

enum verdict decide_stand_in(const struct policy *p, enum verdict early, const struct ipaddr *a,
                             struct ipaddr *ok, size_t *n_ok)
{
    *n_ok = 0;
    if (early != V_ALLOW && early != V_RESOLVE)
        return early;
    return keep_allowed(p, early, a, 1, ok, n_ok);
}
