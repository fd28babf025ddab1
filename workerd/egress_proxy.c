#include "egress_proxy.h"

#include "egress_dir.h"

#include "sandbox_body.h"
#include "sbnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROXY_TIMEOUT_MS 60000L
#define PROXY_MEMORY (128LL * 1024 * 1024)
#define PROXY_PIDS 600 /* its threads: at most 512 connections at once */

/* "name:ip,name:ip" from the config, as Docker's ExtraHosts. */
static json_t *extra_hosts(const char *list)
{
    json_t *arr = json_array();
    char item[WCONF_STR];

    while (list && *list) {
        size_t n = strcspn(list, ", ");
        if (n > 0 && n < sizeof(item)) {
            snprintf(item, sizeof(item), "%.*s", (int)n, list);
            json_array_append_new(arr, json_string(item));
        }
        list += n + (list[n] != '\0');
    }
    return arr;
}

/* What every proxy container shares: the binary, nobody, no capability, a
 * read-only root, bounded memory and pids, the stand-in hosts. */
static json_t *proxy_body(const struct worker_conf *c, json_t *cmd, json_t *labels,
                          const char *network, const char *alias, const char *confdir)
{
    char bind[WCONF_STR + 64], conf[WCONF_STR + 160];
    json_t *binds, *body;

    snprintf(bind, sizeof(bind), "%s:%s:ro", c->egress_bin, EGRESS_MOUNT);
    binds = json_pack("[s]", bind);
    if (confdir) {
        snprintf(conf, sizeof(conf), "%s:" EGRESS_CONF_DIR ":ro", confdir);
        json_array_append_new(binds, json_string(conf));
    }
    body = json_pack("{s:s, s:[s], s:o, s:s, s:o,"
                     " s:{s:o, s:s, s:[s], s:b, s:I, s:I, s:I, s:o},"
                     " s:{s:{s:{s:o}}}}",
                     "Image", c->egress_image, "Entrypoint", EGRESS_MOUNT, "Cmd", cmd, "User",
                     "65534:65534", "Labels", labels, "HostConfig", "Binds", binds, "NetworkMode",
                     network, "CapDrop", "ALL", "ReadonlyRootfs", 1, "PidsLimit",
                     (json_int_t)PROXY_PIDS, "Memory", (json_int_t)PROXY_MEMORY, "MemorySwap",
                     (json_int_t)PROXY_MEMORY, "ExtraHosts", extra_hosts(c->egress_hosts),
                     "NetworkingConfig", "EndpointsConfig", network, "Aliases",
                     alias ? json_pack("[s]", alias) : json_array());
    return body;
}

/* The proxy of sbid on network net (its internal one, or the pool's it got),
 * reading its config from its directory (egress_dir.h): the policy holds
 * secrets, which never go on a command line. */
static json_t *body_on(const struct worker_conf *c, const char *wid, const char *sbid,
                       const char *net)
{
    char dir[WCONF_STR + 160];

    egress_dir_of(c, sbid, dir, sizeof(dir));
    return proxy_body(c,
                      json_pack("[s,s,s,s]", "-listen", "0.0.0.0:" EGRESS_PORT_STR, "-config-file",
                                EGRESS_CONF_DIR "/config"),
                      json_pack("{s:s, s:s, s:s}", "corral.sandbox", sbid, "corral.worker", wid,
                                "corral.role", "egress"),
                      net, EGRESS_ALIAS, dir);
}

json_t *egress_proxy_body(const struct worker_conf *c, const char *wid, const char *sbid)
{
    char net[SBNET_NAME_MAX];

    sbnet_name(net, sizeof(net), sbid, wid, SBNET_INTERNAL);
    return body_on(c, wid, sbid, net);
}

json_t *egress_pool_body(const struct worker_conf *c, const char *wid, const char *confdir,
                         const char *network)
{
    return proxy_body(c,
                      json_pack("[s,s,s,s]", "-listen", "0.0.0.0:" EGRESS_PORT_STR, "-config-file",
                                EGRESS_CONF_DIR "/config"),
                      json_pack("{s:s, s:s}", "corral.worker", wid, "corral.role", "egress-pool"),
                      network, EGRESS_ALIAS, confdir);
}

/* One Engine API call whose acceptable answers are given; 0, 1 refused, -1 down. */
static int call(struct docker *d, const char *method, const char *path, json_t *body,
                const long ok[3], const char *what, char *err, size_t errlen)
{
    json_t *ans = NULL;
    long status = 0;

    if (docker_call(d, method, path, body, PROXY_TIMEOUT_MS, &status, &ans, err, errlen) != 0)
        return -1;
    for (int i = 0; i < 3; i++)
        if (status == ok[i]) {
            json_decref(ans);
            return 0;
        }
    /* Connecting again what is connected: a create delivered again. */
    if (strstr(docker_errmsg(ans, status), "already exists")) {
        json_decref(ans);
        return 0;
    }
    snprintf(err, errlen, "egress proxy %s: %.200s", what, docker_errmsg(ans, status));
    json_decref(ans);
    return 1;
}

void egress_proxy_name(char *out, size_t len, const char *id, const char *wid)
{
    snprintf(out, len, "corral-%s-%s-egress", id, wid);
}

int egress_proxy_start(struct docker *d, const struct worker_conf *c, const char *wid,
                       const char *sbid, char *err, size_t errlen)
{
    char net[SBNET_NAME_MAX];

    sbnet_name(net, sizeof(net), sbid, wid, SBNET_INTERNAL);
    return egress_proxy_start_on(d, c, wid, sbid, net, err, errlen);
}

int egress_proxy_start_on(struct docker *d, const struct worker_conf *c, const char *wid,
                          const char *sbid, const char *net, char *err, size_t errlen)
{
    static const long created[3] = {201, 409, 409}, connected[3] = {200, 200, 200},
                      started[3] = {204, 304, 304};
    char name[SBNET_NAME_MAX + 16], out[SBNET_NAME_MAX], path[SBNET_NAME_MAX * 2 + 64];
    json_t *body;
    int rc;

    body = body_on(c, wid, sbid, net);
    if (!body) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    egress_proxy_name(name, sizeof(name), sbid, wid);
    snprintf(path, sizeof(path), "/containers/create?name=%s", name);
    rc = call(d, "POST", path, body, created, "create", err, errlen);
    json_decref(body);
    if (rc != 0)
        return rc;
    sbnet_name(out, sizeof(out), sbid, wid, SBNET_EGRESS);
    snprintf(path, sizeof(path), "/networks/%s/connect", out);
    body = json_pack("{s:s}", "Container", name);
    rc = call(d, "POST", path, body, connected, "connect", err, errlen);
    json_decref(body);
    if (rc != 0)
        return rc;
    snprintf(path, sizeof(path), "/containers/%s/start", name);
    return call(d, "POST", path, NULL, started, "start", err, errlen);
}

static void *proxy_thread(void *arg)
{
    struct egress_job *j = arg;
    struct docker d = {0};

    if (docker_init(&d, j->c->docker_socket) != 0) {
        snprintf(j->err, sizeof(j->err), "out of memory");
        j->rc = 1;
        return NULL;
    }
    j->rc = egress_proxy_start(&d, j->c, j->wid, j->sbid, j->err, sizeof(j->err));
    docker_close(&d);
    return NULL;
}

int egress_proxy_spawn(struct egress_job *j)
{
    j->rc = 0;
    j->err[0] = '\0';
    if (pthread_create(&j->th, NULL, proxy_thread, j) != 0) {
        snprintf(j->err, sizeof(j->err), "cannot start a thread");
        return -1;
    }
    return 0;
}

int egress_proxy_join(struct egress_job *j)
{
    pthread_join(j->th, NULL);
    return j->rc;
}
