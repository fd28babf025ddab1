#include "init_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > INIT_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

/* A POSIX portable user name, as useradd takes them. */
static int user_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n >= 64 || s[0] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '_' || s[i] == '-' || s[i] == '.' || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

static int token_ok(json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);

    if (s == NULL || n == 0 || n > INIT_TOKEN_MAX || strlen(s) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
            return 0;
    return 1;
}

static int env_ok(json_t *env, char *msg, size_t msgsz)
{
    const char *k;
    json_t *v;

    if (!json_is_object(env)) {
        snprintf(msg, msgsz, "envVars must be an object of strings");
        return -1;
    }
    if (json_object_size(env) > INIT_ENV_MAX) {
        snprintf(msg, msgsz, "envVars: more than %d variables", INIT_ENV_MAX);
        return -1;
    }
    json_object_foreach(env, k, v)
    {
        if (!name_ok(k)) {
            snprintf(msg, msgsz, "envVars: '%.64s' is not a variable name", k);
            return -1;
        }
        if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
            snprintf(msg, msgsz, "envVars: %.64s must be a string without NUL", k);
            return -1;
        }
    }
    return 0;
}

static int field(struct init_req *out, const char *k, json_t *v, char *msg, size_t msgsz)
{
    if (strcmp(k, "accessToken") == 0) {
        if (!token_ok(v)) {
            snprintf(msg, msgsz, "accessToken must be 1 to %d printable characters",
                     INIT_TOKEN_MAX);
            return -1;
        }
        out->access_token = strdup(json_string_value(v));
        if (out->access_token == NULL)
            snprintf(msg, msgsz, "out of memory");
        return out->access_token ? 0 : -1;
    }
    if (strcmp(k, "envVars") == 0) {
        if (env_ok(v, msg, msgsz) < 0)
            return -1;
        json_decref(out->env_vars);
        out->env_vars = json_incref(v);
        return 0;
    }
    if (strcmp(k, "defaultUser") == 0) {
        if (!json_is_string(v) || !user_ok(json_string_value(v))) {
            snprintf(msg, msgsz, "defaultUser must be a user name");
            return -1;
        }
        snprintf(out->default_user, sizeof(out->default_user), "%s", json_string_value(v));
        return 0;
    }
    snprintf(msg, msgsz, "unknown field '%.64s'", k);
    return -1;
}

int init_parse(const char *body, size_t len, struct init_req *out, char *msg, size_t msgsz)
{
    json_error_t jerr;
    json_t *o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr), *v;
    const char *k;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(o)) {
        snprintf(msg, msgsz, "the body must be a JSON object");
        json_decref(o);
        return -1;
    }
    out->env_vars = json_object();
    json_object_foreach(o, k, v)
    {
        if (field(out, k, v, msg, msgsz) < 0) {
            json_decref(o);
            init_req_free(out);
            return -1;
        }
    }
    json_decref(o);
    return 0;
}

void init_req_free(struct init_req *r)
{
    if (r->access_token) {
        memset(r->access_token, 0, strlen(r->access_token));
        free(r->access_token);
    }
    json_decref(r->env_vars);
    memset(r, 0, sizeof(*r));
}
