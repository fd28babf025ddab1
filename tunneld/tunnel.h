/* tunnel.h: one worker tunnel's life in corral-tunneld (decision 0087). */
#ifndef TUNNELD_TUNNEL_H
#define TUNNELD_TUNNEL_H

/* Serves the connection nginx handed over (fd, owned and closed here): the
 * request checked, a port taken for the worker, 101, then the HTTP/2 bridge
 * until the tunnel ends. Runs on a thread of its own. */
void tunnel_serve(int fd);

#endif
