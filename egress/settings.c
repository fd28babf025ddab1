#include "settings.h"

#include "conf_text.h"
#include "ipaddr.h"

#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool settings_sandbox_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > SANDBOX_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
            return false;
    return true;
}

/* "host:port" or "[v6]:port": host a name or an IP literal. */
static int address_parse(const char *s, struct upstream *u)
{
    const char *colon = strrchr(s, ':');
    char host[HOSTNAME_MAX + 1];
    struct ipaddr a;
    size_t hl = colon ? (size_t)(colon - s) : 0;
    bool br = hl >= 2 && s[0] == '[' && s[hl - 1] == ']';

    if (br) {
        s++;
        hl -= 2;
    }
    if (hl == 0 || hl > HOSTNAME_MAX)
        return -1;
    memcpy(host, s, hl);
    host[hl] = '\0';
    if (ipaddr_parse(host, &a) == 0) {
        if (br != (strchr(host, ':') != NULL))
            return -1;
        memcpy(u->host, host, hl + 1);
    } else if (br || hostname_normalize(host, u->host) != 0 || !hostname_resolvable(u->host)) {
        return -1;
    }
    return conf_port(colon + 1, &u->port);
}

/* A SOCKS5 username or password: 1-255 bytes (RFC 1929), no NUL. */
static int field(json_t *v, char *out)
{
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;
    if (!s || n == 0 || n > SOCKS_FIELD_MAX || json_string_length(v) != n)
        return -1;
    memcpy(out, s, n + 1);
    return 0;
}

static int upstream_key(json_t *v, const char *key, struct upstream *u, char *err, size_t errlen)
{
    if (strcmp(key, "address") == 0) {
        if (!json_is_string(v) || address_parse(json_string_value(v), u) != 0)
            return conf_fail(err, errlen, "upstream: \"address\" must be host:port");
        return 0;
    }
    if (strcmp(key, "username") == 0 || strcmp(key, "password") == 0) {
        if (field(v, key[0] == 'u' ? u->user : u->pass) != 0)
            return conf_fail(err, errlen, "upstream: \"%s\" must be 1-255 bytes", key);
        return 0;
    }
    return conf_fail(err, errlen, "upstream: unknown key \"%.32s\"", key);
}

static int upstream_parse(json_t *o, struct upstream *u, char *err, size_t errlen)
{
    const char *key;
    json_t *v;

    if (!json_is_object(o))
        return conf_fail(err, errlen, "upstream: must be an object");
    json_object_foreach(o, key, v)
    {
        if (upstream_key(v, key, u, err, errlen) != 0)
            return -1;
    }
    if (!u->port)
        return conf_fail(err, errlen, "upstream: \"address\" is required");
    if (!u->user[0] != !u->pass[0])
        return conf_fail(err, errlen, "upstream: username and password go together");
    u->set = true;
    return 0;
}

static int policy_key(json_t *val, const char *key, struct settings *s, char *err, size_t errlen)
{
    if (strcmp(key, "allow") == 0 || strcmp(key, "deny") == 0)
        return policy_list_parse(val, key, &s->policy, err, errlen);
    if (strcmp(key, "rules") == 0)
        return rules_parse(val, &s->rules, err, errlen);
    if (strcmp(key, "upstream") == 0)
        return upstream_parse(val, &s->upstream, err, errlen);
    return conf_fail(err, errlen,
                     "policy: unknown key \"%.64s\" (only allow, deny, rules, upstream)", key);
}

static int policy_object(json_t *root, struct settings *s, char *err, size_t errlen)
{
    const char *key;
    json_t *val;

    if (!json_is_object(root))
        return conf_fail(err, errlen, "policy: not a JSON object");
    json_object_foreach(root, key, val)
    {
        if (policy_key(val, key, s, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static void reset(struct settings *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->roots, sizeof(s->roots), "%s", DEFAULT_ROOTS);
}

/* Rules mean interception, which needs the CA to sign with. */
static int check_whole(const struct settings *s, char *err, size_t errlen)
{
    if (s->rules.n && (!s->ca_cert[0] || !s->ca_key[0]))
        return conf_fail(err, errlen, "config: rules need \"ca_cert\" and \"ca_key\"");
    return 0;
}

int settings_from_policy(const char *json, struct settings *s, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    int rc;

    reset(s);
    if (!root)
        return conf_fail(err, errlen, "policy: not JSON (line %d column %d)", jerr.line,
                         jerr.column);
    rc = policy_object(root, s, err, errlen);
    json_decref(root);
    if (rc == 0)
        rc = check_whole(s, err, errlen);
    if (rc != 0)
        settings_free(s);
    return rc;
}

static int path_take(json_t *v, const char *key, char *out, size_t max, char *err, size_t errlen)
{
    const char *p = json_string_value(v);
    if (!p || p[0] != '/' || strlen(p) > max || json_string_length(v) != strlen(p))
        return conf_fail(err, errlen,
                         "config: \"%s\" must be an absolute path of at most %zu bytes", key, max);
    memcpy(out, p, strlen(p) + 1);
    return 0;
}

static int top_key(json_t *v, const char *key, struct settings *s, char *err, size_t errlen)
{
    if (strcmp(key, "sandbox") == 0) {
        if (!json_is_string(v) || !settings_sandbox_ok(json_string_value(v)))
            return conf_fail(err, errlen, "config: \"sandbox\": want 1-%d of [A-Za-z0-9._-]",
                             SANDBOX_ID_MAX);
        snprintf(s->sandbox, sizeof(s->sandbox), "%s", json_string_value(v));
        return 0;
    }
    if (strcmp(key, "policy") == 0)
        return policy_object(v, s, err, errlen);
    if (strcmp(key, "ca_cert") == 0)
        return path_take(v, key, s->ca_cert, SETTINGS_PATH_MAX, err, errlen);
    if (strcmp(key, "ca_key") == 0)
        return path_take(v, key, s->ca_key, SETTINGS_PATH_MAX, err, errlen);
    if (strcmp(key, "roots") == 0)
        return path_take(v, key, s->roots, SETTINGS_PATH_MAX, err, errlen);
    if (strcmp(key, "resolver") == 0)
        return path_take(v, key, s->resolver, UNIX_PATH_MAX, err, errlen);
    return conf_fail(err, errlen, "config: unknown key \"%.64s\"", key);
}

/* jansson's own error text quotes the input near the error, which may be a
 * secret: only the position is said. */
static int from_json(const char *text, struct settings *s, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr), *v;
    const char *key;
    int rc = 0;

    if (!json_is_object(root)) {
        json_decref(root);
        return conf_fail(err, errlen, "config: not a JSON object (line %d column %d)", jerr.line,
                         jerr.column);
    }
    json_object_foreach(root, key, v)
    {
        if ((rc = top_key(v, key, s, err, errlen)) != 0)
            break;
    }
    if (rc == 0 && (!json_object_get(root, "sandbox") || !json_object_get(root, "policy")))
        rc = conf_fail(err, errlen, "config: \"sandbox\" and \"policy\" are required");
    json_decref(root);
    return rc ? rc : check_whole(s, err, errlen);
}

/* "ID\nPOLICY": the first form, as workerd has always written it. */
static int from_lines(const char *text, struct settings *s, char *err, size_t errlen)
{
    const char *nl = strchr(text, '\n');
    size_t n = nl ? (size_t)(nl - text) : 0;
    char id[SANDBOX_ID_MAX + 1];

    if (!nl || n == 0 || n > SANDBOX_ID_MAX)
        return conf_fail(err, errlen, "config file: want the sandbox id, a newline, the policy");
    memcpy(id, text, n);
    id[n] = '\0';
    if (!settings_sandbox_ok(id))
        return conf_fail(err, errlen, "config file: sandbox id: want 1-%d of [A-Za-z0-9._-]",
                         SANDBOX_ID_MAX);
    if (settings_from_policy(nl + 1, s, err, errlen) != 0)
        return -1;
    memcpy(s->sandbox, id, n + 1);
    return 0;
}

int settings_from_file(const char *text, struct settings *s, char *err, size_t errlen)
{
    const char *p = text;
    int rc;

    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (*p != '{')
        return from_lines(text, s, err, errlen);
    reset(s);
    rc = from_json(p, s, err, errlen);
    if (rc != 0)
        settings_free(s);
    return rc;
}

void settings_free(struct settings *s)
{
    policy_free(&s->policy);
    rules_free(&s->rules);
    memset(&s->upstream, 0, sizeof(s->upstream)); /* the password */
}
