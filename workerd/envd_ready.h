/* envd_ready.h: is a sandbox's envd answering yet?
 *
 * A create is reported "running" only once envd answers GET /health on the
 * container's address, so that a client can use envd the moment its create
 * returns. workerd reaches the container on its address (containers_ip's), as
 * the data port will. */
#ifndef WORKERD_ENVD_READY_H
#define WORKERD_ENVD_READY_H

/* One GET http://ip:port/health with short timeouts: 1 when envd answered
 * 204, 0 otherwise. */
int envd_health_once(const char *ip, int port);

/* A warm sandbox's claim (decision 0082): POST http://ip:port/init with
 * X-Corral-Init: secret and body (JSON). The HTTP status (204: claimed), or
 * 0 when envd did not answer. Neither value is ever logged. */
long envd_init_post(const char *ip, int port, const char *secret, const char *body);

#endif
