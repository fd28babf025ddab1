/* egress_dir.h: the config directory of one sandbox's egress proxy,
 * <state_dir>/egress/<sandbox id>, bind-mounted read-only into its container
 * at EGRESS_CONF_DIR (decision 0091):
 *   config        {"sandbox", "policy", "ca_cert", "ca_key", "roots",
 *                 "resolver"}, the proxy's -config-file: the policy holds the
 *                 rules' header values and the upstream's password, so it is
 *                 the proxy's user's alone (0400); written whole and renamed
 *                 into place, and read again on SIGHUP (a live change);
 *   ca.key/ca.pem the sandbox's interception CA (egress_ca.h);
 *   roots.pem     the roots real servers are checked against (egress_roots);
 *   resolve.sock  where it asks for placeholders (egress_resolver.h).
 * A pooled proxy's directory is renamed to the sandbox's when claimed
 * (egress_pool.h), then written like any. */
#ifndef WORKERD_EGRESS_DIR_H
#define WORKERD_EGRESS_DIR_H

#include "worker_conf.h"

#include <jansson.h>
#include <stddef.h>

#define EGRESS_PROXY_UID 65534 /* nobody: the proxy container's user */

/* <state_dir>/egress, and a sandbox's directory in it. */
void egress_dir_root(const struct worker_conf *c, char *out, size_t len);
void egress_dir_of(const struct worker_conf *c, const char *sbid, char *out, size_t len);

/* Makes (or completes) sbid's directory for policy: the CA, the roots, the
 * resolver's socket and the config. 0, or -1 with err. */
int egress_dir_write(const struct worker_conf *c, const char *sbid, const json_t *policy, char *err,
                     size_t errlen);

/* The files a directory may hold, NULL-terminated, for its removal. */
extern const char *const egress_dir_files[];

#endif
