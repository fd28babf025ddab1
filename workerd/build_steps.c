#include "build_steps.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = {
    [STEP_RUN] = "RUN",         [STEP_COPY] = "COPY", [STEP_ENV] = "ENV",
    [STEP_WORKDIR] = "WORKDIR", [STEP_USER] = "USER",
};
/* How many args each kind needs at least: RUN cmd [user]; COPY src dest
 * [user [mode]]; ENV K V [K V …]; WORKDIR dir; USER name. */
static const size_t min_args[] = {
    [STEP_RUN] = 1, [STEP_COPY] = 2, [STEP_ENV] = 2, [STEP_WORKDIR] = 1, [STEP_USER] = 1,
};

const char *build_step_name(enum step_kind k)
{
    return kinds[k];
}

static int all_strings(json_t *args)
{
    size_t i;
    json_t *a;

    json_array_foreach(args, i, a) if (!json_is_string(a)) return 0;
    return 1;
}

int build_step_decode(json_t *j, struct build_step *s, char *err, size_t errlen)
{
    const char *type = json_string_value(json_object_get(j, "type"));
    json_t *args = json_object_get(j, "args");
    size_t k;

    memset(s, 0, sizeof(*s));
    for (k = 0; type && k < sizeof(kinds) / sizeof(kinds[0]); k++)
        if (strcmp(kinds[k], type) == 0)
            break;
    if (!type || k == sizeof(kinds) / sizeof(kinds[0])) {
        snprintf(err, errlen, "unknown step type %.32s", type ? type : "(none)");
        return -1;
    }
    s->kind = (enum step_kind)k;
    if (!json_is_array(args) || !all_strings(args) || json_array_size(args) < min_args[k] ||
        (s->kind == STEP_ENV && json_array_size(args) % 2 != 0)) {
        snprintf(err, errlen, "%s: bad args", kinds[k]);
        return -1;
    }
    s->args = args;
    s->files_hash = json_string_value(json_object_get(j, "filesHash"));
    s->force = json_is_true(json_object_get(j, "force"));
    if (s->kind == STEP_COPY && (!s->files_hash || !*s->files_hash)) {
        snprintf(err, errlen, "COPY: no filesHash");
        return -1;
    }
    return 0;
}

int build_layer_key(const char *parent, const json_t *j, char *out)
{
    json_t *canon = json_pack("{s:O?, s:O?}", "type", json_object_get(j, "type"), "args",
                              json_object_get(j, "args"));
    json_t *fh = json_object_get(j, "filesHash");
    unsigned char md[SHA256_DIGEST_LENGTH];
    char *text, *all = NULL;

    if (!canon)
        return -1;
    if (json_is_string(fh))
        json_object_set(canon, "filesHash", fh);
    text = json_dumps(canon, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(canon);
    if (!text)
        return -1;
    if (asprintf(&all, "%s%s", parent, text) < 0)
        all = NULL;
    free(text);
    if (!all)
        return -1;
    SHA256((const unsigned char *)all, strlen(all), md);
    free(all);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return 0;
}

int build_copy_dest(const char *workdir, const char *dest, char *out, size_t len)
{
    int n;

    if (!dest || !*dest)
        return -1;
    if (dest[0] == '/')
        n = snprintf(out, len, "%s", dest);
    else
        n = snprintf(out, len, "%s%s%s", workdir,
                     workdir[0] && workdir[strlen(workdir) - 1] == '/' ? "" : "/",
                     strcmp(dest, ".") == 0 ? "" : dest);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

void build_state_init(struct build_state *st, const char *workdir, const char *user)
{
    st->env = json_array();
    snprintf(st->workdir, sizeof(st->workdir), "%s", workdir && *workdir ? workdir : "/");
    snprintf(st->user, sizeof(st->user), "%s", user && *user ? user : "root");
}

void build_state_free(struct build_state *st)
{
    json_decref(st->env);
    st->env = NULL;
}

char *build_state_encode(const struct build_state *st)
{
    json_t *j =
        json_pack("{s:O, s:s, s:s}", "env", st->env, "workdir", st->workdir, "user", st->user);
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    json_decref(j);
    return text;
}

int build_state_decode(const char *text, struct build_state *st)
{
    json_t *j = text ? json_loads(text, 0, NULL) : NULL, *env = json_object_get(j, "env");
    const char *wd = json_string_value(json_object_get(j, "workdir"));
    const char *user = json_string_value(json_object_get(j, "user"));
    int ok = json_is_array(env) && all_strings(env) && wd && user;

    build_state_init(st, ok ? wd : NULL, ok ? user : NULL);
    if (ok)
        json_array_extend(st->env, env);
    json_decref(j);
    return ok ? 0 : -1;
}

/* The index in env of K's "K=…", or -1. */
static long env_index(json_t *env, const char *k)
{
    size_t i, n = strlen(k);
    json_t *e;

    json_array_foreach(env, i, e)
    {
        const char *s = json_string_value(e);
        if (strncmp(s, k, n) == 0 && s[n] == '=')
            return (long)i;
    }
    return -1;
}

int build_state_env(struct build_state *st, json_t *args)
{
    for (size_t i = 0; i + 1 < json_array_size(args); i += 2) {
        const char *k = json_string_value(json_array_get(args, i));
        const char *v = json_string_value(json_array_get(args, i + 1));
        char *kv;
        long at;

        if (!k || !v || !*k || strchr(k, '='))
            return -1;
        if (asprintf(&kv, "%s=%s", k, v) < 0)
            return -1;
        at = env_index(st->env, k);
        if (at >= 0)
            json_array_set_new(st->env, (size_t)at, json_string(kv));
        else
            json_array_append_new(st->env, json_string(kv));
        free(kv);
    }
    return 0;
}
