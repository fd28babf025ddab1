#include "init.h"

#include "auth.h"
#include "envd.h"
#include "init_parse.h"
#include "interp_launch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INIT_BODY_MAX (1024 * 1024)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char *secret; /* NULL once claimed, or when not warm */
static int pending;  /* read without the lock: __atomic */
static int was_warm;

int init_take_secret(int warm)
{
    const char *env = getenv(INIT_SECRET_ENV);

    if (env != NULL && env[0] != '\0' && !warm) {
        fprintf(stderr, "envd: $%s is set without -warm\n", INIT_SECRET_ENV);
        return -1;
    }
    if (warm && (env == NULL || env[0] == '\0')) {
        fprintf(stderr, "envd: -warm needs $%s\n", INIT_SECRET_ENV);
        return -1;
    }
    if (env == NULL || env[0] == '\0') { /* blanked: a snapshot of a claimed one */
        unsetenv(INIT_SECRET_ENV);
        return 0;
    }
    secret = strdup(env);
    memset((char *)env, 0, strlen(env)); /* /proc/1/environ keeps the original block */
    unsetenv(INIT_SECRET_ENV);
    if (secret == NULL)
        return -1;
    was_warm = 1;
    __atomic_store_n(&pending, 1, __ATOMIC_RELEASE);
    return 0;
}

int init_pending(void)
{
    return __atomic_load_n(&pending, __ATOMIC_ACQUIRE);
}

/* Runs with mu held and nothing else served: no process exists yet, so the
 * environment is envd's alone to change. */
static void apply(struct init_req *q)
{
    const char *k;
    json_t *v;

    json_object_foreach(q->env_vars, k, v)
    {
        setenv(k, json_string_value(v), 1);
    }
    if (q->default_user[0])
        snprintf(envd_cfg.default_user, sizeof(envd_cfg.default_user), "%s", q->default_user);
    envd_cfg.access_token = q->access_token; /* kept for envd's life */
    envd_cfg.access_token_len = q->access_token ? strlen(q->access_token) : 0;
    q->access_token = NULL;
    memset(secret, 0, strlen(secret));
    free(secret);
    secret = NULL;
    __atomic_store_n(&pending, 0, __ATOMIC_RELEASE);
}

static int refused(struct http_req *r)
{
    const char *h = http_header(r, "X-Corral-Init");

    if (!was_warm) {
        http_send_error(r, 404, "no route for POST /init: this sandbox was not started warm");
        return 1;
    }
    if (secret == NULL) {
        http_send_error(r, 409, "this sandbox was claimed already");
        return 1;
    }
    if (h == NULL || !auth_secret_equal(h, strlen(h), secret, strlen(secret))) {
        http_send_error(r, 401, "X-Corral-Init is missing or wrong");
        return 1;
    }
    return 0;
}

void init_handle(struct http_req *r)
{
    char *body = NULL, msg[160];
    size_t len = 0;
    struct init_req q;
    int rc;

    pthread_mutex_lock(&mu);
    if (refused(r)) {
        pthread_mutex_unlock(&mu);
        return;
    }
    rc = http_body_read_all(r, &body, &len, INIT_BODY_MAX);
    if (rc < 0 || init_parse(body, len, &q, msg, sizeof(msg)) < 0) {
        pthread_mutex_unlock(&mu);
        if (rc == -2)
            http_send_error(r, 413, "the init body is over %d bytes", INIT_BODY_MAX);
        else
            http_send_error(r, 400, "%s", rc < 0 ? "cannot read the body" : msg);
        free(body);
        return;
    }
    apply(&q);
    pthread_mutex_unlock(&mu);
    envd_log("claimed: %zu env vars, default user %s, access token %s",
             json_object_size(q.env_vars), envd_cfg.default_user,
             envd_cfg.access_token ? "required" : "not set");
    char *env_json = json_dumps(q.env_vars, JSON_COMPACT);
    interp_launch_claimed(env_json ? env_json : "{}");
    if (env_json)
        memset(env_json, 0, strlen(env_json));
    free(env_json);
    init_req_free(&q);
    if (body)
        memset(body, 0, len);
    free(body);
    http_send_head(r, 204, NULL, 0, NULL);
}
