#include "egress_dir.h"

#include "egress_ca.h"
#include "egress_proxy.h"
#include "egress_resolver.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_LEN 4096
#define ROOTS_MAX (8 * 1024 * 1024)

const char *const egress_dir_files[] = {"config",    "config.tmp",   "pool-id",    "ca.key",
                                        "ca.pem",    "ca.key.tmp",   "ca.pem.tmp", "roots.pem",
                                        "roots.tmp", "resolve.sock", NULL};

void egress_dir_root(const struct worker_conf *c, char *out, size_t len)
{
    snprintf(out, len, "%s/egress", c->state_dir);
}

void egress_dir_of(const struct worker_conf *c, const char *sbid, char *out, size_t len)
{
    snprintf(out, len, "%s/egress/%s", c->state_dir, sbid);
}

/* Writes text to dir/name through a temporary file renamed into place. */
static int put_file(const char *dir, const char *name, const char *tmpname, const char *text,
                    size_t len, mode_t mode, uid_t owner)
{
    char tmp[PATH_LEN + 32], dst[PATH_LEN + 32];
    int fd, ok;

    snprintf(tmp, sizeof(tmp), "%s/%s", dir, tmpname);
    snprintf(dst, sizeof(dst), "%s/%s", dir, name);
    unlink(tmp);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    ok = write(fd, text, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok && chown(tmp, owner, owner) == 0 && chmod(tmp, mode) == 0 &&
         rename(tmp, dst) == 0;
    if (!ok)
        unlink(tmp);
    return ok ? 0 : -1;
}

/* The operator's roots, copied once: the proxy reads only its directory. */
static int copy_roots(const struct worker_conf *c, const char *dir, char *err, size_t errlen)
{
    char dst[PATH_LEN + 32], *buf;
    FILE *f;
    size_t n;
    int rc;

    snprintf(dst, sizeof(dst), "%s/roots.pem", dir);
    if (access(dst, F_OK) == 0)
        return 0;
    if (!(f = fopen(c->egress_roots, "r"))) {
        snprintf(err, errlen, "egress_roots %.200s: %s", c->egress_roots, strerror(errno));
        return -1;
    }
    buf = malloc(ROOTS_MAX);
    n = buf ? fread(buf, 1, ROOTS_MAX, f) : 0;
    fclose(f);
    rc = buf && n > 0 ? put_file(dir, "roots.pem", "roots.tmp", buf, n, 0444, 0) : -1;
    free(buf);
    if (rc != 0)
        snprintf(err, errlen, "egress_roots %.200s: cannot copy it to %.200s", c->egress_roots,
                 dir);
    return rc;
}

/* The proxy's config: the policy without the identity definitions (the
 * control plane keeps those; the proxy only names tokens). */
static int put_config(const char *dir, const char *sbid, const json_t *policy, char *err,
                      size_t errlen)
{
    json_t *p = json_deep_copy(policy), *conf;
    char *text;
    int rc;

    json_object_del(p, "iam");
    conf = json_pack("{s:s, s:o, s:s, s:s, s:s, s:s}", "sandbox", sbid, "policy", p, "ca_cert",
                     EGRESS_CONF_DIR "/ca.pem", "ca_key", EGRESS_CONF_DIR "/ca.key", "roots",
                     EGRESS_CONF_DIR "/roots.pem", "resolver", EGRESS_CONF_DIR "/resolve.sock");
    text = conf ? json_dumps(conf, JSON_COMPACT) : NULL;
    json_decref(conf);
    rc = text ? put_file(dir, "config", "config.tmp", text, strlen(text), 0400, EGRESS_PROXY_UID)
              : -1;
    if (text) {
        explicit_bzero(text, strlen(text));
        free(text);
    }
    if (rc != 0)
        snprintf(err, errlen, "egress config of %s: cannot write it in %.200s", sbid, dir);
    return rc;
}

int egress_dir_write(const struct worker_conf *c, const char *sbid, const json_t *policy, char *err,
                     size_t errlen)
{
    char root[PATH_LEN], dir[PATH_LEN];

    egress_dir_root(c, root, sizeof(root));
    egress_dir_of(c, sbid, dir, sizeof(dir));
    if ((mkdir(root, 0755) != 0 && errno != EEXIST) || (mkdir(dir, 0755) != 0 && errno != EEXIST)) {
        snprintf(err, errlen, "egress config of %s: mkdir %.200s: %s", sbid, dir, strerror(errno));
        return -1;
    }
    if (egress_ca_ensure(dir, sbid, EGRESS_PROXY_UID, err, errlen) != 0 ||
        copy_roots(c, dir, err, errlen) != 0)
        return -1;
    if (egress_resolver_open(dir, sbid, err, errlen) != 0)
        return -1;
    return put_config(dir, sbid, policy, err, errlen);
}
