/*
 * The request's envs come last so they win over envd's environment and the
 * user's HOME, USER and LOGNAME, as in E2B's envd. A base entry without '='
 * is skipped: execve would pass it on, but it names no variable.
 */
#include "env_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int env_list_set(struct env_list *e, const char *key, const char *value)
{
    size_t klen = strlen(key);
    char *kv;

    if (asprintf(&kv, "%s=%s", key, value) < 0)
        return -1;
    for (size_t i = 0; i < e->n; i++) {
        if (strncmp(e->v[i], key, klen) == 0 && e->v[i][klen] == '=') {
            free(e->v[i]);
            e->v[i] = kv;
            return 0;
        }
    }
    if (e->n + 2 > e->cap) {
        size_t ncap = e->cap ? e->cap * 2 : 64;
        char **nv = realloc(e->v, ncap * sizeof(*nv));
        if (nv == NULL) {
            free(kv);
            return -1;
        }
        e->v = nv;
        e->cap = ncap;
    }
    e->v[e->n++] = kv;
    e->v[e->n] = NULL;
    return 0;
}

const char *env_list_get(const struct env_list *e, const char *key)
{
    size_t klen = strlen(key);

    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->v[i], key, klen) == 0 && e->v[i][klen] == '=')
            return e->v[i] + klen + 1;
    return NULL;
}

void env_list_free(struct env_list *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
}

int env_build(struct env_list *e, char *const *base, const struct envd_user *u, json_t *envs)
{
    const char *k;
    json_t *v;

    for (char *const *p = base; *p != NULL; p++) {
        char *eq = strchr(*p, '=');
        if (eq == NULL)
            continue;
        char key[256];
        snprintf(key, sizeof(key), "%.*s", (int)(eq - *p), *p);
        if (env_list_set(e, key, eq + 1) < 0)
            return -1;
    }
    if (env_list_set(e, "HOME", u->home) < 0 || env_list_set(e, "USER", u->name) < 0 ||
        env_list_set(e, "LOGNAME", u->name) < 0)
        return -1;
    json_object_foreach(envs, k, v)
    {
        if (json_is_string(v) && env_list_set(e, k, json_string_value(v)) < 0)
            return -1;
    }
    return 0;
}
