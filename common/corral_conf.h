/* corral_conf.h: corral.conf, read by corral-api, corral-sched and corralctl
 * (one file, so the operator CLI always talks to the Redis the API uses). */
#ifndef CORRAL_CONF_H
#define CORRAL_CONF_H

#include <stddef.h>

struct corral_conf {
    char redis_host[256];
    long redis_port;
    char redis_socket[256];
    char secret_file[256];
    char server_secret[256]; /* loaded from secret_file, never logged */
    char gateway_secret_file[256];
    char gateway_secret[256]; /* shared with nginx: signs the data plane's tokens */
    char domain[256];         /* E2B sandbox domain answered to clients ("" = none) */
    char listen[256];         /* FastCGI socket path (corral-api) */
    long threads;             /* handler threads per corral-api process */
    long longpoll_max;        /* heartbeats one process holds open at once */
    long create_wait_max;     /* creates one process holds open waiting for "running" */
    long max_body_bytes;
    long poll_ms;           /* heartbeat long-poll wait */
    long lease_ms;          /* a worker silent this long is dead */
    long create_timeout_ms; /* a create waits this long for "running" */
    long grace_ms;          /* then corral-sched reclaims after this much more */
    long sweep_ms;          /* corral-sched period */
    long redis_timeout_ms;
    long key_rate;  /* requests/s one verified credential may make (decision 0028) */
    long key_burst; /* and how many of them at once */
};

/* Defaults, then the file (if path is not NULL), then validation and the
 * secret. 0, or -1 with err naming the bad key. */
int corral_conf_load(const char *path, struct corral_conf *c, char *err, size_t errlen);

#endif
