/* egress_trust.h: the sandbox trusts its egress proxy's CA (decision 0091).
 *
 * A sandbox with an egress proxy has that proxy's CA certificate at
 * EGRESS_CA_FILE (workerd puts it there) and NODE_EXTRA_CA_CERTS naming it.
 * At start envd makes the system bundle (EGRESS_CA_BUNDLE, which OpenSSL,
 * curl and Python read) hold it, between marker lines, and takes out a block
 * an earlier start left (a snapshot of a sandbox that had another proxy, or
 * one whose policy was removed), so the bundle trusts this sandbox's proxy
 * and no other. Only when envd runs as root in a container (never in agent
 * mode: a person's machine's trust is not Corral's to change). */
#ifndef ENVD_EGRESS_TRUST_H
#define ENVD_EGRESS_TRUST_H

#include <stddef.h>

#define EGRESS_CA_FILE "/.corral/egress-ca.pem"
#define EGRESS_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define EGRESS_CA_BEGIN "# corral egress proxy CA: begin\n"
#define EGRESS_CA_END "# corral egress proxy CA: end\n"

/* bundle (len bytes) without a marked block, then ca's block when ca is not
 * NULL: malloc'd, its length in *outlen. Pure. */
char *egress_trust_text(const char *bundle, size_t len, const char *ca, size_t *outlen);

/* Applies it to the files above. 0 (also nothing to do), -1. */
int egress_trust_apply(void);

#endif
