/* dataplane.h: this worker's side of the data plane — the data port
 * (dataport.c) given the handshake's data key and a resolver from sandbox id to
 * its container's address. */
#ifndef WORKERD_DATAPLANE_H
#define WORKERD_DATAPLANE_H

#include "worker_conf.h"

/* Listens on conf->data_addr. 0, or -1 (logged). */
int dataplane_start(const struct worker_conf *conf);

/* After every handshake: the worker id (container names) and the data key
 * gateway signatures are checked with; the previous key (may be NULL) is
 * still accepted for prev_valid_ms, while gateways' route caches hold it. */
void dataplane_set_identity(const char *worker_id, const char *data_key, const char *prev_key,
                            long prev_valid_ms);

/* Drops sbid's cached address: it was paused, and a paused sandbox is not
 * routed (the next lookup asks dockerd, which says it is frozen). */
void dataplane_forget(const char *sbid);

/* sbid is being killed: from now on no request is routed to it, even while
 * dockerd still lists its container (a kill is answered to its caller only
 * once this and the removal are done: decision 0073). */
void dataplane_bar(const char *sbid);

#endif
