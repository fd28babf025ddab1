/* A process's environment built from envd's own, the user's and the
 * request's envs (process.Process/Start). Pure; tests/envd/unit_process.c
 * checks it. */
#ifndef ENVD_ENV_PARSE_H
#define ENVD_ENV_PARSE_H

#include "users.h"

#include <jansson.h>
#include <stddef.h>

/* A NULL-terminated "K=V" array where a later set of the same key replaces it. */
struct env_list {
    char **v;
    size_t n, cap;
};

int env_list_set(struct env_list *e, const char *key, const char *value);
/* The value of key, NULL when unset. */
const char *env_list_get(const struct env_list *e, const char *key);
void env_list_free(struct env_list *e);

/* base ("K=V" strings, NULL-terminated: envd's environ), then u's HOME, USER
 * and LOGNAME, then envs (an object; values that are not strings are
 * skipped), each replacing what came before. 0 ok; -1 out of memory. */
int env_build(struct env_list *e, char *const *base, const struct envd_user *u, json_t *envs);

#endif
