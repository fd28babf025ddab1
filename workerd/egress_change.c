#include "egress_change.h"

#include "egress_dir.h"

#include "egress_pool.h"
#include "egress_proxy.h"
#include "sandbox_body.h"
#include "sbnet.h"
#include "tar_one.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHANGE_TIMEOUT_MS 60000L

/* One Engine API call; 0 when it answered one of ok (0-terminated), 1
 * refused (err), -1 dockerd down. */
static int call(struct docker *d, const char *method, const char *path, json_t *body,
                const long *ok, const char *what, char *err, size_t errlen)
{
    json_t *ans = NULL;
    long status = 0;

    if (docker_call(d, method, path, body, CHANGE_TIMEOUT_MS, &status, &ans, err, errlen) != 0)
        return -1;
    for (; *ok; ok++)
        if (status == *ok) {
            json_decref(ans);
            return 0;
        }
    snprintf(err, errlen, "egress change: %s: %.200s", what, docker_errmsg(ans, status));
    json_decref(ans);
    return 1;
}

/* The one network the sandbox's container is on (net), and whether its envd
 * applies a -net-env file (a container made before it did cannot have its
 * proxy variables changed). 0, 1 refused (err), -1 down. */
static int current(struct docker *d, const char *name, char *net, size_t netlen, int *net_env,
                   char *err, size_t errlen)
{
    static const long ok[] = {200, 0};
    char path[256];
    json_t *info = NULL, *v;
    const char *key;
    long status = 0;
    size_t i;

    snprintf(path, sizeof(path), "/containers/%s/json", name);
    if (docker_call(d, "GET", path, NULL, CHANGE_TIMEOUT_MS, &status, &info, err, errlen) != 0)
        return -1;
    if (status != ok[0]) {
        snprintf(err, errlen, "egress change: %s: %.200s", name, docker_errmsg(info, status));
        json_decref(info);
        return 1;
    }
    net[0] = '\0';
    json_object_foreach(json_object_get(json_object_get(info, "NetworkSettings"), "Networks"), key,
                        v)
    {
        snprintf(net, netlen, "%s", key);
        break;
    }
    *net_env = 0;
    json_array_foreach(json_object_get(json_object_get(info, "Config"), "Cmd"), i, v)
    {
        *net_env |= json_is_string(v) && strcmp(json_string_value(v), "-net-env") == 0;
    }
    json_decref(info);
    if (!net[0]) {
        snprintf(err, errlen, "egress change: %s is on no network", name);
        return 1;
    }
    return 0;
}

/* A sandbox's network with a proxy is an internal one (sbnet.h), its own or
 * one the pool made (egress_pool.h): both names end so. */
static int is_internal(const char *net)
{
    size_t n = strlen(net);

    return n > 4 && strcmp(net + n - 4, "-int") == 0;
}

/* sbid's proxy removed (pooled or its own: both go by the same name). 0, or
 * -1 (comes again). */
static int remove_proxy(struct docker *d, const char *wid, const char *sbid, char *err,
                        size_t errlen)
{
    char name[SBNET_NAME_MAX + 16];

    egress_proxy_name(name, sizeof(name), sbid, wid);
    return containers_remove(d, name, err, errlen);
}

/* The proxy of sbid made anew with policy (its directory rewritten), on
 * net, as a pooled one is. */
static int new_proxy(struct docker *d, const struct worker_conf *c, const char *wid,
                     const char *sbid, json_t *policy, const char *net, char *err, size_t errlen)
{
    if (remove_proxy(d, wid, sbid, err, errlen) != 0)
        return -1;
    if (egress_dir_write(c, sbid, policy, err, errlen) != 0)
        return 1;
    return egress_proxy_start_on(d, c, wid, sbid, net, err, errlen);
}

/* The stopped container name, off network from, onto network to. */
static int move(struct docker *d, const char *name, const char *from, const char *to, char *err,
                size_t errlen)
{
    static const long ok[] = {200, 0};
    char path[SBNET_NAME_MAX + 64];
    json_t *body = json_pack("{s:s}", "Container", name);
    int rc;

    snprintf(path, sizeof(path), "/networks/%s/disconnect", from);
    rc = call(d, "POST", path, body, ok, "leave the old network", err, errlen);
    snprintf(path, sizeof(path), "/networks/%s/connect", to);
    if (rc == 0)
        rc = call(d, "POST", path, body, ok, "join the new network", err, errlen);
    json_decref(body);
    return rc;
}

/* envd's -net-env file, put into the stopped container: the proxy variables
 * set (on) or unset. */
static int write_env(struct docker *d, const char *name, int on, char *err, size_t errlen)
{
    json_t *lines = json_array(), *l;
    char *text = NULL, *tar = NULL, path[256];
    size_t len = 0, tlen = 0, i;
    long status = 0;
    FILE *f = open_memstream(&text, &len);
    int rc = -1;

    sandbox_proxy_env(lines, on);
    json_array_foreach(lines, i, l) if (f) fprintf(f, "%s\n", json_string_value(l));
    json_decref(lines);
    if (!f || fclose(f) != 0 || tar_one(ENVD_NET_ENV_FILE, text, len, &tar, &tlen) != 0) {
        free(text);
        snprintf(err, errlen, "egress change: out of memory");
        return 1;
    }
    snprintf(path, sizeof(path), "/containers/%s/archive?path=" ENVD_NET_ENV_DIR, name);
    if (docker_put_bytes(d, path, tar, tlen, "application/x-tar", CHANGE_TIMEOUT_MS, &status, err,
                         errlen) == 0) {
        rc = status == 200 ? 0 : 1;
        if (rc)
            snprintf(err, errlen, "egress change: writing %s: dockerd answered %ld",
                     ENVD_NET_ENV_FILE, status);
    }
    free(tar);
    free(text);
    return rc;
}

int egress_ca_put(struct docker *d, const struct worker_conf *c, const char *name, const char *sbid,
                  char *err, size_t errlen)
{
    char dir[WCONF_STR + 160], file[WCONF_STR + 192], path[256], *tar = NULL, *pem = NULL;
    size_t tlen = 0, n = 0;
    long status = 0;
    FILE *f;
    int rc = 1;

    egress_dir_of(c, sbid, dir, sizeof(dir));
    snprintf(file, sizeof(file), "%s/ca.pem", dir);
    if ((f = fopen(file, "r"))) {
        pem = malloc(16384);
        n = pem ? fread(pem, 1, 16384, f) : 0;
        fclose(f);
    }
    if (n == 0 || tar_one("egress-ca.pem", pem, n, &tar, &tlen) != 0) {
        free(pem);
        snprintf(err, errlen, "egress change: %s unreadable", file);
        return 1;
    }
    snprintf(path, sizeof(path), "/containers/%s/archive?path=" ENVD_NET_ENV_DIR, name);
    if (docker_put_bytes(d, path, tar, tlen, "application/x-tar", CHANGE_TIMEOUT_MS, &status, err,
                         errlen) != 0)
        rc = -1;
    else if (status == 200)
        rc = 0;
    else
        snprintf(err, errlen, "egress change: writing its CA: dockerd answered %ld", status);
    free(tar);
    free(pem);
    return rc;
}

/* A network left behind (the container is off it, its proxy removed). */
static int drop_network(struct docker *d, const char *net, char *err, size_t errlen)
{
    static const long ok[] = {204, 404, 0};
    char path[SBNET_NAME_MAX + 32];

    snprintf(path, sizeof(path), "/networks/%s", net);
    return call(d, "DELETE", path, NULL, ok, "remove the old network", err, errlen);
}

/* none -> policy: an internal network with its proxy, from the pool or made
 * now, as a create does (containers.c). */
static int add_policy(struct docker *d, const struct worker_conf *c, const char *wid,
                      const char *sbid, json_t *policy, char *net, size_t netlen, char *err,
                      size_t errlen)
{
    int rc = egress_pool_take(d, sbid, policy, net, netlen, err, errlen);

    if (rc != 2)
        return rc;
    sbnet_name(net, netlen, sbid, wid, SBNET_INTERNAL);
    if ((rc = sbnet_ensure(d, wid, sbid, SBNET_INTERNAL, NULL, err, errlen)) != 0)
        return rc;
    if (egress_dir_write(c, sbid, policy, err, errlen) != 0)
        return 1;
    return egress_proxy_start(d, c, wid, sbid, err, errlen);
}

/* policy -> none: the old proxy and what the pool kept for it go once the
 * container is off their network. */
static int drop_policy(struct docker *d, const char *wid, const char *sbid, const char *old,
                       char *err, size_t errlen)
{
    if (remove_proxy(d, wid, sbid, err, errlen) != 0)
        return -1;
    if (egress_pool_forget(d, sbid) != 0) {
        snprintf(err, errlen, "egress pool: the old proxy's network was not removed");
        return -1;
    }
    return drop_network(d, old, err, errlen);
}

/* What a change that failed after its move left (the container already on
 * the network it wants, so the change tried again finds nothing to move):
 * with a policy now, the old open network; without, the old proxy, what the
 * pool kept for it and its internal network. Each is gone already after a
 * change that went through: dockerd answers 404 and nothing is done. */
static int drop_leftovers(struct docker *d, const char *wid, const char *sbid, int will, char *err,
                          size_t errlen)
{
    char net[SBNET_NAME_MAX];

    sbnet_name(net, sizeof(net), sbid, wid, will ? SBNET_OPEN : SBNET_INTERNAL);
    return will ? drop_network(d, net, err, errlen) : drop_policy(d, wid, sbid, net, err, errlen);
}

int egress_change_apply(struct docker *d, const struct worker_conf *c, const struct host_caps *caps,
                        const char *wid, const char *sbid, json_t *policy, int stopped, char *err,
                        size_t errlen)
{
    char name[160], old[SBNET_NAME_MAX], net[SBNET_NAME_MAX];
    int rc, net_env, had, will = json_is_object(policy);

    containers_name(name, sizeof(name), sbid, wid);
    if ((rc = current(d, name, old, sizeof(old), &net_env, err, errlen)) != 0)
        return rc;
    had = is_internal(old);
    if (had && will)
        rc = new_proxy(d, c, wid, sbid, policy, old, err, errlen);
    if (had == will)
        return rc == 0 ? drop_leftovers(d, wid, sbid, will, err, errlen) : rc;
    if (!stopped) {
        snprintf(err, errlen,
                 "egress change: a sandbox resumed with its memory keeps its network; %s an "
                 "egress policy needs a fresh start",
                 will ? "adding" : "removing");
        return 1;
    }
    if (!net_env) {
        snprintf(err, errlen,
                 "egress change: its envd takes no -net-env (made by an older "
                 "workerd): its proxy variables cannot change");
        return 1;
    }
    if (will && !caps->egress) {
        snprintf(err, errlen, "egress policy: this worker has no egress proxy");
        return 1;
    }
    if (will)
        rc = add_policy(d, c, wid, sbid, policy, net, sizeof(net), err, errlen);
    else {
        sbnet_name(net, sizeof(net), sbid, wid, SBNET_OPEN);
        rc = sbnet_ensure(d, wid, sbid, SBNET_OPEN, NULL, err, errlen);
    }
    /* The variables before the move: a change that fails after the move comes
     * again and finds the container on the network it wants (nothing more
     * done then), so nothing that must come with the move may come after it. */
    if (rc == 0)
        rc = write_env(d, name, will, err, errlen);
    if (rc == 0 && will)
        rc = egress_ca_put(d, c, name, sbid, err, errlen);
    if (rc == 0)
        rc = move(d, name, old, net, err, errlen);
    if (rc == 0)
        rc = will ? drop_network(d, old, err, errlen) : drop_policy(d, wid, sbid, old, err, errlen);
    return rc;
}
