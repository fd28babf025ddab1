/* egress_resolver.h: what a sandbox's egress proxy asks for a request's
 * placeholders (decision 0091). Each proxy with a config directory
 * (egress_dir.h) gets a unix socket there, resolve.sock, bind-mounted into its
 * container and nowhere else: who connects to it is that sandbox's proxy, so
 * the sandbox's id comes from the socket, never from what is sent. A request
 * is one JSON line {"host", "secrets": [names], "tokens": [names]}; workerd
 * asks the control plane (POST /v1/worker/egress-resolve, which checks the
 * sandbox is this worker's and running) and answers one line,
 * {"secrets": {...}, "tokens": {...}} or {"error": "..."}. Values pass through
 * and are never logged. A line {"audit": [...], "dropped"?} (the proxy's
 * transform counts, egress/transform_audit.h) goes to POST
 * /v1/worker/egress-audit instead, answered {} once recorded. */
#ifndef WORKERD_EGRESS_RESOLVER_H
#define WORKERD_EGRESS_RESOLVER_H

#include <stddef.h>

struct worker;

/* Starts the thread that accepts on every open socket, and opens the sockets
 * of the sandboxes whose directories a previous run left under root. 0, -1. */
int egress_resolver_start(struct worker *w, const char *root);

/* Listens on dir/resolve.sock for sbid's proxy, unless it does already (a
 * config rewritten); a socket left without a listener is replaced. 0, or -1
 * with err. */
int egress_resolver_open(const char *dir, const char *sbid, char *err, size_t errlen);

/* Stops listening for sbid (its sandbox is gone). */
void egress_resolver_close(const char *sbid);

#endif
