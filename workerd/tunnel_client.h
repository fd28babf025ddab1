/* tunnel_client.h: the worker's end of its tunnel (decision 0087). */
#ifndef WORKERD_TUNNEL_CLIENT_H
#define WORKERD_TUNNEL_CLIENT_H

#include "worker.h"

/* Starts the tunnel thread (w->conf->tunnel set, data_addr "unix:PATH"). It
 * runs until the process ends. 0, -1. */
int tunnel_client_start(struct worker *w);

#endif
