/* reply.h: what the proxy itself says, to the client and to the log. */
#ifndef CORRAL_EGRESS_REPLY_H
#define CORRAL_EGRESS_REPLY_H

#include "http_head.h"
#include "ipaddr.h"

#include <stdbool.h>
#include <stdint.h>

/* A complete text/plain answer with Connection: close. 0 or -1. */
int reply_error(int fd, int status, const char *body, int64_t deadline);

/* shutdown(SHUT_WR), then read and drop what the client still sends for a
 * moment, so closing does not reset the connection before it read the answer. */
void reply_close(int fd);

/* One line on stderr: egress sandbox=ID allow|refuse METHOD HOST:PORT ADDR
 * REASON, "-" for what is unknown. Never headers or bodies: they hold secrets. */
void reply_log(const char *sandbox, bool allow, const struct http_req *r, const struct ipaddr *addr,
               const char *reason);

#endif
