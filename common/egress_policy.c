#include "egress_policy.h"

#include <stdio.h>
#include <string.h>

static int entry_check(const json_t *v, const char *field, size_t i, unsigned kinds, int is_allow,
                       char *err, size_t errlen)
{
    struct egress_rule r;
    const char *text = json_string_value(v);

    if (!text || strlen(text) > 253 || egress_rule_parse(text, &r) != 0) {
        snprintf(err, errlen, "%s[%zu]: not a host name, IP address or CIDR", field, i);
        return -1;
    }
    if (!(kinds & (unsigned)r.kind)) {
        snprintf(err, errlen, "%s[%zu]: %s", field, i,
                 r.kind == EGRESS_RULE_CIDR
                     ? "not a host name (IP addresses and CIDRs are not accepted here)"
                     : "domain names are not supported here; use IP addresses or CIDRs");
        return -1;
    }
    if (is_allow && egress_rule_is_private(&r)) {
        snprintf(err, errlen,
                 "%s[%zu]: %.64s is a private destination; private destinations are always "
                 "closed, whatever the policy says",
                 field, i, text);
        return -1;
    }
    return 0;
}

int egress_list_check(const json_t *list, const char *field, unsigned kinds, int is_allow,
                      char *err, size_t errlen)
{
    size_t i;
    json_t *v;

    if (!json_is_array(list) || json_array_size(list) > EGRESS_RULE_MAX_LIST) {
        snprintf(err, errlen, "%s: must be an array of at most %d entries", field,
                 EGRESS_RULE_MAX_LIST);
        return -1;
    }
    json_array_foreach(list, i, v)
    {
        if (entry_check(v, field, i, kinds, is_allow, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int has_entry(const json_t *list, const char *text)
{
    size_t i;
    json_t *v;

    json_array_foreach(list, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), text) == 0)
            return 1;
    }
    return 0;
}

void egress_deny_all(json_t *deny)
{
    static const char *const all[] = {"0.0.0.0/0", "::/0"};

    for (size_t i = 0; i < 2; i++)
        if (!has_entry(deny, all[i]))
            json_array_append_new(deny, json_string(all[i]));
}

char *egress_policy_text(const json_t *allow, const json_t *deny)
{
    json_t *p = json_pack("{s:O, s:O}", "allow", allow, "deny", deny);
    char *text = p ? json_dumps(p, JSON_COMPACT) : NULL;

    json_decref(p);
    return text;
}
