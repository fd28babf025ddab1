#include "containers.h"

#include "clock.h"
#include "envd_ready.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOCKER_TIMEOUT_MS 60000L

int containers_id_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n >= CTR_ID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '-' || s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
            return 0;
    return 1;
}

static void ctr_name(char *out, size_t len, const char *sbid, const char *wid)
{
    snprintf(out, len, "corral-%s-%s", sbid, wid);
}

static void st_set(struct ctr_state *st, const char *state, const char *fmt, const char *arg)
{
    snprintf(st->state, sizeof(st->state), "%s", state);
    snprintf(st->reason, sizeof(st->reason), fmt, arg);
}

/* The container's environment: the sandbox's env vars (envd hands them to
 * every process it starts), then, for a secure sandbox, envd's access token,
 * which envd takes out of its environment before it runs anything. The token
 * travels only in this request body to dockerd: never in argv, never in a log. */
static json_t *env_array(json_t *sb)
{
    json_t *arr = json_array(), *v;
    const char *k, *token = json_string_value(json_object_get(sb, "envd_access_token"));
    char *kv;

    json_object_foreach(json_object_get(sb, "env"), k, v)
    {
        if (!json_is_string(v) || !*k || strchr(k, '=') || strcmp(k, ENVD_TOKEN_ENV) == 0)
            continue;
        if (asprintf(&kv, "%s=%s", k, json_string_value(v)) < 0)
            continue;
        json_array_append_new(arr, json_string(kv));
        free(kv);
    }
    if (token && *token && asprintf(&kv, "%s=%s", ENVD_TOKEN_ENV, token) >= 0) {
        json_array_append_new(arr, json_string(kv));
        explicit_bzero(kv, strlen(kv));
        free(kv);
    }
    return arr;
}

static json_t *host_config(const struct worker_conf *c, json_t *sb)
{
    json_t *hc = json_object();
    double cpu = json_number_value(json_object_get(sb, "cpu_cores"));
    json_int_t mem = json_integer_value(json_object_get(sb, "memory_mb"));
    const char *rt = json_string_value(json_object_get(sb, "runtime"));
    char bind[WCONF_STR + 64];

    json_object_set_new(hc, "Runtime", json_string(rt && *rt ? rt : "runc"));
    if (cpu > 0)
        json_object_set_new(hc, "NanoCpus", json_integer((json_int_t)(cpu * 1e9)));
    if (mem > 0) {
        /* MemorySwap = Memory: no swap, so over the limit means an OOM kill. */
        json_object_set_new(hc, "Memory", json_integer(mem * 1024 * 1024));
        json_object_set_new(hc, "MemorySwap", json_integer(mem * 1024 * 1024));
    }
    snprintf(bind, sizeof(bind), "%s:%s:ro", c->envd_bin, ENVD_MOUNT);
    json_object_set_new(hc, "Binds", json_pack("[s]", bind));
    return hc;
}

/* envd is the entrypoint (PID 1: it also reaps orphans) and runs as root, so
 * that it can start each process as the user a request names ("user", uid
 * 1000, in the templates) whatever USER the image declares. */
static json_t *create_body(const struct worker_conf *c, const struct wtemplate *t, const char *wid,
                           json_t *sb)
{
    json_t *labels = json_pack(
        "{s:s, s:s, s:s, s:s, s:s}", "corral.sandbox", json_string_value(json_object_get(sb, "id")),
        "corral.workspace", json_string_value(json_object_get(sb, "workspace")) ?: "",
        "corral.worker", wid, "corral.tier",
        json_string_value(json_object_get(sb, "tier")) ?: "UNKNOWN", "corral.template", t->name);

    return json_pack("{s:s, s:o, s:o, s:[s], s:[s,s], s:s, s:{s:{}}, s:o}", "Image", t->image,
                     "Labels", labels, "Env", env_array(sb), "Entrypoint", ENVD_MOUNT, "Cmd",
                     "-port", ENVD_PORT_STR, "User", "0", "ExposedPorts", ENVD_PORT_STR "/tcp",
                     "HostConfig", host_config(c, sb));
}

/* Exit reason of a stopped container: OOMKilled wins over the exit code. */
static void exit_reason(json_t *state, struct ctr_state *st)
{
    char code[32];

    snprintf(st->state, sizeof(st->state), "exited");
    if (json_is_true(json_object_get(state, "OOMKilled"))) {
        snprintf(st->reason, sizeof(st->reason), "OOMKilled");
        return;
    }
    snprintf(code, sizeof(code), "%lld",
             (long long)json_integer_value(json_object_get(state, "ExitCode")));
    st_set(st, "exited", "exit code %s", code);
}

/* GET /containers/NAME/json. 0 found, 1 absent, -1 dockerd unreachable. */
static int inspect(struct docker *d, const char *name, json_t **out, char *err, size_t errlen)
{
    char path[512];
    long status = 0;

    snprintf(path, sizeof(path), "/containers/%s/json", name);
    if (docker_call(d, "GET", path, NULL, DOCKER_TIMEOUT_MS, &status, out, err, errlen) != 0)
        return -1;
    if (status == 404) {
        json_decref(*out);
        *out = NULL;
        return 1;
    }
    if (status != 200) {
        snprintf(err, errlen, "inspect %s: %s", name, docker_errmsg(*out, status));
        json_decref(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

static int remove_container(struct docker *d, const char *name, char *err, size_t errlen)
{
    char path[512];
    long status = 0;
    json_t *ans = NULL;

    snprintf(path, sizeof(path), "/containers/%s?force=1&v=1", name);
    if (docker_call(d, "DELETE", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen) != 0)
        return -1;
    if (status != 204 && status != 404 && status != 409) {
        snprintf(err, errlen, "remove %s: %s", name, docker_errmsg(ans, status));
        json_decref(ans);
        return -1;
    }
    json_decref(ans); /* 409: removal already in progress, which is what we want */
    return 0;
}

/* Starts a created container; a start that fails removes it, so that the
 * sandbox is reported failed and leaves nothing behind. */
static int start(struct docker *d, const char *name, struct ctr_state *st)
{
    char path[512], err[256];
    long status = 0;
    json_t *ans = NULL;

    snprintf(path, sizeof(path), "/containers/%s/start", name);
    if (docker_call(d, "POST", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, sizeof(err)) !=
        0) {
        log_warn("%s", err);
        return -1;
    }
    if (status == 204 || status == 304) {
        json_decref(ans);
        st_set(st, "running", "%s", "");
        return 0;
    }
    st_set(st, "failed", "start: %.200s", docker_errmsg(ans, status));
    json_decref(ans);
    if (remove_container(d, name, err, sizeof(err)) != 0)
        log_warn("%s", err);
    return 1;
}

/* Gives up on a create: the sandbox is reported failed with why, and its
 * container is removed, so that nothing half-made is left behind. */
static int give_up(struct docker *d, const char *name, struct ctr_state *st)
{
    char err[256];

    snprintf(st->state, sizeof(st->state), "failed");
    if (remove_container(d, name, err, sizeof(err)) != 0)
        log_warn("%s", err);
    return 1;
}

/* A started container is running only once envd answers /health: polls its
 * address until ready_ms runs out (bounded, so that a broken image costs one
 * create, not the heartbeat). A container that stops meanwhile failed. */
static int await_envd(struct docker *d, const char *name, long ready_ms, struct ctr_state *st)
{
    int64_t deadline = clock_now_ms() + ready_ms;
    char err[256], ip[64];
    json_t *info = NULL, *state;
    const char *s;

    for (;;) {
        int rc = inspect(d, name, &info, err, sizeof(err));
        if (rc < 0) {
            log_warn("%s", err);
            return -1;
        }
        if (rc == 1) {
            st_set(st, "failed", "%s", "container vanished during create");
            return 1;
        }
        state = json_object_get(info, "State");
        s = json_string_value(json_object_get(state, "Status"));
        if (!s || strcmp(s, "running") != 0) {
            exit_reason(state, st);
            snprintf(err, sizeof(err), "%s", st->reason);
            json_decref(info);
            snprintf(st->reason, sizeof(st->reason), "sandbox stopped before envd answered (%.64s)",
                     err);
            return give_up(d, name, st);
        }
        rc = envd_container_ip(info, ip, sizeof(ip));
        json_decref(info);
        if (rc == 0 && envd_health_once(ip, ENVD_PORT)) {
            st_set(st, "running", "%s", "");
            return 0;
        }
        if (clock_now_ms() >= deadline) {
            snprintf(st->reason, sizeof(st->reason), "envd did not answer on port %d within %ld ms",
                     ENVD_PORT, ready_ms);
            return give_up(d, name, st);
        }
        clock_sleep_ms(10); /* envd starts in milliseconds: poll often, briefly */
    }
}

/* The container exists: bring it to what a create asks for, or report it. */
static int settle(struct docker *d, const char *name, long ready_ms, struct ctr_state *st)
{
    json_t *info = NULL, *state;
    char err[256];
    const char *s;
    int rc = inspect(d, name, &info, err, sizeof(err));

    if (rc != 0) {
        if (rc < 0)
            log_warn("%s", err);
        else
            st_set(st, "failed", "%s", "container vanished during create");
        return rc < 0 ? -1 : 1;
    }
    state = json_object_get(info, "State");
    s = json_string_value(json_object_get(state, "Status"));
    if (s && strcmp(s, "created") == 0) {
        rc = start(d, name, st);
        if (rc == 0)
            rc = await_envd(d, name, ready_ms, st);
    } else if (s && (strcmp(s, "exited") == 0 || strcmp(s, "dead") == 0)) {
        exit_reason(state, st);
    } else {
        rc = await_envd(d, name, ready_ms, st); /* a create delivered again */
    }
    json_decref(info);
    return rc;
}

static int create_refused(struct ctr_state *st, json_t *ans, long status, const char *image)
{
    if (status == 404)
        st_set(st, "failed", "image %.200s not found", image);
    else
        st_set(st, "failed", "create: %.200s", docker_errmsg(ans, status));
    json_decref(ans);
    return 1;
}

int containers_create(struct docker *d, const struct worker_conf *c, const char *wid, json_t *sb,
                      long ready_ms, struct ctr_state *st)
{
    const char *sbid = json_string_value(json_object_get(sb, "id"));
    const char *tname = json_string_value(json_object_get(sb, "template"));
    const struct wtemplate *t;
    char name[256], path[512], err[256];
    json_t *body, *ans = NULL;
    long status = 0;
    int rc;

    memset(st, 0, sizeof(*st));
    snprintf(st->sbid, sizeof(st->sbid), "%s", sbid && containers_id_ok(sbid) ? sbid : "");
    snprintf(st->tier, sizeof(st->tier), "%s",
             json_string_value(json_object_get(sb, "tier")) ?: "UNKNOWN");
    if (!st->sbid[0]) {
        st_set(st, "failed", "%s", "bad sandbox id");
        return 1;
    }
    t = tname ? wconf_template(c, tname) : NULL;
    if (!t) {
        st_set(st, "failed", "unknown template %.64s", tname ? tname : "(none)");
        return 1;
    }
    ctr_name(name, sizeof(name), sbid, wid);
    body = create_body(c, t, wid, sb);
    if (!body) {
        st_set(st, "failed", "%s", "out of memory");
        return 1;
    }
    snprintf(path, sizeof(path), "/containers/create?name=%s", name);
    rc = docker_call(d, "POST", path, body, DOCKER_TIMEOUT_MS, &status, &ans, err, sizeof(err));
    json_decref(body);
    if (rc != 0) {
        log_warn("%s", err);
        return -1;
    }
    if (status != 201 && status != 409) /* 409: it exists, a create delivered again */
        return create_refused(st, ans, status, t->image);
    json_decref(ans);
    return settle(d, name, ready_ms, st);
}

/* GET /{containers,networks}?filters=: the ids of objects labelled with this
 * sandbox and this worker. Returns the answer array, or NULL (err set). */
static json_t *list_labelled(struct docker *d, const char *what, const char *wid, const char *sbid,
                             char *err, size_t errlen)
{
    char filt[512], path[1024], *enc;
    long status = 0;
    json_t *ans = NULL;

    if (sbid)
        snprintf(filt, sizeof(filt), "{\"label\":[\"corral.worker=%s\",\"corral.sandbox=%s\"]}",
                 wid, sbid);
    else
        snprintf(filt, sizeof(filt), "{\"label\":[\"corral.worker=%s\"]}", wid);
    enc = docker_urlencode(d, filt);
    if (!enc) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(path, sizeof(path), "/%s?%sfilters=%s", what,
             strcmp(what, "containers/json") == 0 ? "all=1&" : "", enc);
    curl_free(enc);
    if (docker_call(d, "GET", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen) != 0)
        return NULL;
    if (status != 200 || !json_is_array(ans)) {
        snprintf(err, errlen, "list %s: %s", what, docker_errmsg(ans, status));
        json_decref(ans);
        return NULL;
    }
    return ans;
}

static int remove_networks(struct docker *d, const char *wid, const char *sbid, char *err,
                           size_t errlen)
{
    json_t *nets = list_labelled(d, "networks", wid, sbid, err, errlen), *n, *ans;
    char path[512];
    long status;
    size_t i;

    if (!nets)
        return -1;
    json_array_foreach(nets, i, n)
    {
        snprintf(path, sizeof(path), "/networks/%s",
                 json_string_value(json_object_get(n, "Id")) ?: "-");
        ans = NULL;
        if (docker_call(d, "DELETE", path, NULL, DOCKER_TIMEOUT_MS, &status, &ans, err, errlen) !=
            0) {
            json_decref(nets);
            return -1;
        }
        json_decref(ans);
    }
    json_decref(nets);
    return 0;
}

int containers_kill(struct docker *d, const char *wid, const char *sbid, char *err, size_t errlen)
{
    json_t *ctrs, *ctr;
    size_t i;

    if (!containers_id_ok(sbid))
        return 0; /* no container can carry such a label: it is gone */
    ctrs = list_labelled(d, "containers/json", wid, sbid, err, errlen);
    if (!ctrs)
        return -1;
    json_array_foreach(ctrs, i, ctr)
    {
        const char *id = json_string_value(json_object_get(ctr, "Id"));
        if (id && remove_container(d, id, err, errlen) != 0) {
            json_decref(ctrs);
            return -1;
        }
    }
    json_decref(ctrs);
    return remove_networks(d, wid, sbid, err, errlen);
}

/* One entry of GET /containers/json as a state; 0 when it is to be reported. */
static int entry_state(struct docker *d, json_t *ctr, struct ctr_state *st)
{
    json_t *labels = json_object_get(ctr, "Labels"), *info = NULL;
    const char *sbid = json_string_value(json_object_get(labels, "corral.sandbox"));
    const char *state = json_string_value(json_object_get(ctr, "State"));
    const char *id = json_string_value(json_object_get(ctr, "Id"));
    char err[256];

    if (!sbid || !containers_id_ok(sbid) || !state || !id || strcmp(state, "created") == 0)
        return -1;
    memset(st, 0, sizeof(*st));
    snprintf(st->sbid, sizeof(st->sbid), "%s", sbid);
    snprintf(st->tier, sizeof(st->tier), "%s",
             json_string_value(json_object_get(labels, "corral.tier")) ?: "UNKNOWN");
    if (strcmp(state, "exited") != 0 && strcmp(state, "dead") != 0) {
        st_set(st, "running", "%s", "");
        return 0;
    }
    if (inspect(d, id, &info, err, sizeof(err)) != 0) {
        st_set(st, "exited", "%s", "exit status unknown");
        return 0;
    }
    exit_reason(json_object_get(info, "State"), st);
    json_decref(info);
    return 0;
}

int containers_list(struct docker *d, const char *wid, struct ctr_state **out, int *n, char *err,
                    size_t errlen)
{
    json_t *ctrs = list_labelled(d, "containers/json", wid, NULL, err, errlen), *ctr;
    size_t i;

    *out = NULL;
    *n = 0;
    if (!ctrs)
        return -1;
    *out = calloc(json_array_size(ctrs) + 1, sizeof(**out));
    if (!*out) {
        json_decref(ctrs);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    json_array_foreach(ctrs, i, ctr) if (entry_state(d, ctr, &(*out)[*n]) == 0)(*n)++;
    json_decref(ctrs);
    return 0;
}
