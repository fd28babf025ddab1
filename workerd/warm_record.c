#include "warm_record.h"

#include "envd_ready.h"
#include "log.h"
#include "sandbox_body.h"
#include "warm_index.h"
#include "warm_pool.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOT_LEN (WCONF_STR + 16)
#define PATH_LEN (ROOT_LEN + 96)

static char root[ROOT_LEN]; /* <state_dir>/warm; "" when no pool is kept */

static void path_of(char *out, size_t len, const char *sbid)
{
    snprintf(out, len, "%s/%s", root, sbid);
}

static json_t *read_record(const char *sbid)
{
    char path[PATH_LEN];

    if (!root[0] || !containers_id_ok(sbid))
        return NULL;
    path_of(path, sizeof(path), sbid);
    return json_load_file(path, 0, NULL);
}

/* Each record's claim into warm_index: one the last run did not rename is
 * found only through it. (A record without "ctr" was renamed at its claim,
 * before session 15: its name finds it.) */
static void load_index(void)
{
    DIR *dir = opendir(root);
    struct dirent *e;

    while (dir && (e = readdir(dir))) {
        json_t *rec = containers_id_ok(e->d_name) ? read_record(e->d_name) : NULL;
        const char *warm_id = json_string_value(json_object_get(rec, "warm"));
        const char *ctr = json_string_value(json_object_get(rec, "ctr"));

        if (warm_id && ctr && warm_index_put(e->d_name, warm_id, ctr) != 0)
            log_sandbox("warn", e->d_name, NULL, "warm sandbox %s: not indexed", warm_id);
        json_decref(rec);
    }
    if (dir)
        closedir(dir);
}

int warm_record_init(const char *state_dir, char *err, size_t errlen)
{
    snprintf(root, sizeof(root), "%s/warm", state_dir);
    if (mkdir(root, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "mkdir %s: %s", root, strerror(errno));
        root[0] = '\0';
        return -1;
    }
    load_index();
    return 0;
}

/* Written whole, then renamed into place; 0600 from its first byte. */
static int write_record(const char *sbid, json_t *rec)
{
    char path[PATH_LEN], tmp[PATH_LEN + 8];
    int fd, rc;

    path_of(path, sizeof(path), sbid);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    rc = json_dumpfd(rec, fd, JSON_COMPACT);
    rc = (fsync(fd) == 0 && rc == 0) ? 0 : -1;
    close(fd);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

/* What envd is told: the access token and the env vars (as a cold
 * sandbox's container gets them: sandbox_body.c). */
static json_t *init_body(json_t *sb)
{
    const char *token = json_string_value(json_object_get(sb, "envd_access_token"));
    json_t *env = json_object(), *v;
    const char *k;

    json_object_foreach(json_object_get(sb, "env"), k, v)
    {
        if (json_is_string(v) && *k && !strchr(k, '=') && strcmp(k, ENVD_TOKEN_ENV) != 0)
            json_object_set(env, k, v);
    }
    if (token && *token)
        return json_pack("{s:s, s:o}", "accessToken", token, "envVars", env);
    return json_pack("{s:o}", "envVars", env);
}

/* POST /init to sbid's envd (at known_ip, or where dockerd says) with the
 * record's secret and body. */
static int tell_envd(struct docker *d, const char *wid, const char *sbid, json_t *rec,
                     const char *known_ip)
{
    char ip[64], *body = json_dumps(json_object_get(rec, "init"), JSON_COMPACT);
    long code = 0;
    int found = known_ip && *known_ip;

    if (found)
        snprintf(ip, sizeof(ip), "%s", known_ip);
    else
        found = containers_ip(d, wid, sbid, 5000, ip, sizeof(ip)) == 0;
    if (body && found)
        code =
            envd_init_post(ip, ENVD_PORT, json_string_value(json_object_get(rec, "secret")), body);
    if (body)
        explicit_bzero(body, strlen(body));
    free(body);
    if (code != 204)
        log_sandbox("warn", sbid, NULL, "warm sandbox: envd's init answered %ld", code);
    return code == 204 ? 0 : -1;
}

/* The claim's cpu, memory and pids limits set on sbid's container (40-50 ms:
 * a pool makes its sandboxes with the limits claims ask, so most skip it).
 * 0, 1 refused, -1. */
static int set_limits(struct docker *d, const char *wid, json_t *sb, const char *warm_id,
                      const char *sbid)
{
    char name[160], path[320], err[512];
    json_t *limits = sandbox_limits(sb);
    int rc;

    containers_name(name, sizeof(name), sbid, wid);
    snprintf(path, sizeof(path), "/containers/%s/update", name);
    rc = limits ? docker_expect(d, "POST", path, limits, 200, err, sizeof(err)) : 1;
    json_decref(limits);
    if (rc != 0)
        log_sandbox("warn", sbid, NULL, "warm sandbox %s: %s", warm_id,
                    rc < 0 ? "dockerd down" : err);
    return rc == 2 ? 1 : rc;
}

int warm_record_bind(struct docker *d, const char *wid, json_t *sb, const struct warm_claim *c,
                     struct ctr_state *st)
{
    json_t *rec = json_pack("{s:s, s:s, s:s, s:o}", "warm", c->id, "ctr", c->ctr, "secret",
                            c->secret, "init", init_body(sb));
    int rc = rec && write_record(st->sbid, rec) == 0 ? 0 : 1;

    if (rc == 0 && warm_index_put(st->sbid, c->id, c->ctr) != 0)
        rc = 1;
    if (rc == 0 && !c->limits_set)
        rc = set_limits(d, wid, sb, c->id, st->sbid);
    if (rc == 0)
        rc = tell_envd(d, wid, st->sbid, rec, c->ip) == 0 ? 0 : 1;
    json_decref(rec);
    if (rc != 0) {
        if (warm_record_forget(d, wid, st->sbid) != 0)
            rc = -1;
        return rc;
    }
    st->state = SB_RUNNING;
    st->reason[0] = '\0';
    st->claimed = 1;
    log_sandbox("info", st->sbid, st->tier, "claimed warm sandbox %s%s", c->id,
                c->limits_set ? " (made with its limits)" : "");
    return 0;
}

int warm_record_rename(struct docker *d, const char *wid, const char *sbid)
{
    char ctr[80], to[160], path[400], err[512];
    int rc;

    if (!warm_index_ctr(sbid, ctr, sizeof(ctr)))
        return 0;
    containers_own_name(to, sizeof(to), sbid, wid);
    snprintf(path, sizeof(path), "/containers/%s/rename?name=%s", ctr, to);
    rc = docker_expect(d, "POST", path, NULL, 204, err, sizeof(err));
    if (rc > 0 && !strstr(err, "No such container")) /* killed since: nothing to name */
        log_sandbox("warn", sbid, NULL, "warm sandbox: its rename: %s", err);
    return rc < 0 ? -1 : 0;
}

int warm_record_reinit(struct docker *d, const char *wid, const char *sbid)
{
    json_t *rec = read_record(sbid);
    int rc = rec ? tell_envd(d, wid, sbid, rec, NULL) : 0; /* a restart may move it */

    json_decref(rec);
    return rc;
}

void warm_record_env_append(const char *sbid, json_t *arr)
{
    json_t *rec = read_record(sbid), *v;
    const char *k;
    char *kv;

    json_object_foreach(json_object_get(json_object_get(rec, "init"), "envVars"), k, v)
    {
        if (asprintf(&kv, "%s=%s", k, json_string_value(v) ?: "") >= 0) {
            json_array_append_new(arr, json_string(kv));
            free(kv);
        }
    }
    json_decref(rec);
}

int warm_record_forget(struct docker *d, const char *wid, const char *sbid)
{
    json_t *rec = read_record(sbid);
    const char *warm_id = json_string_value(json_object_get(rec, "warm"));
    char path[PATH_LEN], err[256];
    int rc = 0;

    if (warm_id && strncmp(warm_id, WARM_PREFIX, strlen(WARM_PREFIX)) == 0)
        rc = containers_kill(d, wid, warm_id, err, sizeof(err));
    json_decref(rec);
    if (rc != 0)
        return -1;
    warm_index_drop(sbid); /* its container is gone: sbid names nothing */
    if (root[0] && containers_id_ok(sbid)) {
        path_of(path, sizeof(path), sbid);
        unlink(path);
    }
    return 0;
}

/* Warm networks no container of this worker is on: a refill that workerd's
 * end cut between the network and the container (the kill -9 test found one). */
static void sweep_networks(struct docker *d, const char *wid, const json_t *held)
{
    json_t *nets = containers_list_own(d, "networks", "", wid, NULL), *o;
    char err[256];
    size_t i;

    json_array_foreach(nets, i, o)
    {
        const char *id =
            json_string_value(json_object_get(json_object_get(o, "Labels"), "corral.sandbox"));
        if (id && strncmp(id, WARM_PREFIX, strlen(WARM_PREFIX)) == 0 && !json_object_get(held, id))
            containers_kill(d, wid, id, err, sizeof(err));
    }
    json_decref(nets);
}

/* Warm containers of this worker still under a warm name, then warm networks
 * left without one. */
static void sweep_unclaimed(struct docker *d, const char *wid)
{
    json_t *list = containers_list_own(d, "containers/json", "all=1&", wid, "warm"),
           *held = json_object(), *o;
    char err[256], buf[CTR_ID_MAX];
    size_t i;

    if (!list || !held) {
        json_decref(list);
        json_decref(held);
        return;
    }
    json_array_foreach(list, i, o)
    {
        json_t *labels = json_object_get(o, "Labels");
        const char *name = json_string_value(json_array_get(json_object_get(o, "Names"), 0));
        const char *warm_id = json_string_value(json_object_get(labels, "corral.sandbox"));
        const char *sbid = warm_id ? containers_sbid_of(labels, name, wid, buf, sizeof(buf)) : NULL;
        if (warm_id && !sbid)
            containers_kill(d, wid, warm_id, err, sizeof(err));
        else if (warm_id) /* claimed: its network is its sandbox's */
            json_object_set_new(held, warm_id, json_true());
        if (sbid && name && strstr(name, WARM_PREFIX)) /* the last run's claim, not renamed */
            warm_record_rename(d, wid, sbid);
    }
    json_decref(list);
    sweep_networks(d, wid, held);
    json_decref(held);
}

void warm_record_sweep(struct docker *d, const char *wid)
{
    DIR *dir;
    struct dirent *e;

    sweep_unclaimed(d, wid);
    if (!root[0] || !(dir = opendir(root)))
        return;
    while ((e = readdir(dir)))
        if (e->d_name[0] != '.' && containers_id_ok(e->d_name) &&
            containers_running(d, wid, e->d_name) == 2)
            warm_record_forget(d, wid, e->d_name);
    closedir(dir);
}
