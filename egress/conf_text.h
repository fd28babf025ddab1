/* conf_text.h: what the proxy's config readers (egress_conf.c, settings.c,
 * rules.c) share: a refusal's message, and a port number. Pure. */
#ifndef EGRESS_CONF_TEXT_H
#define EGRESS_CONF_TEXT_H

#include <stddef.h>

/* The message into err; always -1, for `return conf_fail(...)`. */
__attribute__((format(printf, 3, 4))) int conf_fail(char *err, size_t errlen, const char *fmt, ...);

/* p, 1 to 65535 in decimal digits only, into *port. 0, or -1. */
int conf_port(const char *p, unsigned *port);

#endif
