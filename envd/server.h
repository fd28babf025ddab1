/* The listening socket and the route table; one thread per connection. */
#ifndef ENVD_SERVER_H
#define ENVD_SERVER_H

/* Binds addr:port and serves forever. Returns only on a listen error. */
int server_run(const char *addr, int port);

#endif
