#include "sbnet.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

#define NET_TIMEOUT_MS 60000L

void sbnet_name(char *out, size_t len, const char *sbid, const char *wid, enum sbnet_kind k)
{
    if (k == SBNET_EGRESS)
        snprintf(out, len, "corral-egress");
    else
        snprintf(out, len, "corral-%s-%s%s", sbid, wid, k == SBNET_INTERNAL ? "-int" : "");
}

void sbnet_bridge(char *out, size_t len, const char *netname, enum sbnet_kind k)
{
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256((const unsigned char *)netname, strlen(netname), md);
    snprintf(out, len, "%s%02x%02x%02x%02x%02x%02x",
             k == SBNET_INTERNAL ? SBNET_IF_INTERNAL : SBNET_IF_OPEN, md[0], md[1], md[2], md[3],
             md[4], md[5]);
}

static json_t *create_body(const char *name, const char *wid, const char *sbid, enum sbnet_kind k,
                           const char *subnet)
{
    char br[SBNET_IF_MAX];
    json_t *labels = json_pack("{s:s}", "corral.role", k == SBNET_EGRESS ? "egress" : "sandbox");

    if (k != SBNET_EGRESS) { /* the egress network is the host's, no worker's */
        json_object_set_new(labels, "corral.worker", json_string(wid));
        json_object_set_new(labels, "corral.sandbox", json_string(sbid));
    }
    sbnet_bridge(br, sizeof(br), name, k);
    /* CheckDuplicate: Docker would otherwise happily make a second network of
     * the same name when a create is delivered again. Proxies on the egress
     * network have no business with each other: no inter-container traffic. */
    json_t *body =
        json_pack("{s:s, s:b, s:s, s:b, s:o, s:{s:s, s:s}}", "Name", name, "CheckDuplicate", 1,
                  "Driver", "bridge", "Internal", k == SBNET_INTERNAL, "Labels", labels, "Options",
                  "com.docker.network.bridge.name", br, "com.docker.network.bridge.enable_icc",
                  k == SBNET_EGRESS ? "false" : "true");

    if (body && subnet && *subnet) /* the pools' /28s are for sandboxes, not all proxies */
        json_object_set_new(body, "IPAM", json_pack("{s:[{s:s}]}", "Config", "Subnet", subnet));
    return body;
}

int sbnet_ensure(struct docker *d, const char *wid, const char *sbid, enum sbnet_kind k,
                 const char *subnet, char *err, size_t errlen)
{
    char name[SBNET_NAME_MAX];
    json_t *body, *ans = NULL;
    long status = 0;
    int rc;

    sbnet_name(name, sizeof(name), sbid, wid, k);
    body = create_body(name, wid, sbid, k, subnet);
    if (!body) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    rc = docker_call(d, "POST", "/networks/create", body, NET_TIMEOUT_MS, &status, &ans, err,
                     errlen);
    json_decref(body);
    if (rc != 0)
        return -1;
    if (status != 201 && status != 409) {
        snprintf(err, errlen, "network %s: %.200s", name, docker_errmsg(ans, status));
        json_decref(ans);
        return 1;
    }
    json_decref(ans);
    return 0;
}
