/* egress_ca.h: the certificate authority of one sandbox's egress proxy
 * (decision 0091). The proxy intercepts HTTPS to hosts that have rules and
 * answers with certificates this CA signs; only that sandbox trusts it (its
 * certificate is put into the sandbox: sandbox_body.h), so a CA's key opens
 * nothing of any other sandbox. Made once per sandbox, kept with its proxy's
 * config (egress_dir.h) for as long as the sandbox lives, so a proxy made anew
 * (a live policy change, a resume) signs with the CA the sandbox already
 * trusts. */
#ifndef WORKERD_EGRESS_CA_H
#define WORKERD_EGRESS_CA_H

#include <stddef.h>
#include <sys/types.h>

/* Makes dir/ca.key (EC P-256, owned by owner, mode 0400) and dir/ca.pem (the
 * self-signed CA, 0444) unless both are there. 0, or -1 with err. */
int egress_ca_ensure(const char *dir, const char *sbid, uid_t owner, char *err, size_t errlen);

#endif
