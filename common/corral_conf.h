/* corral_conf.h: corral.conf, read by corral-api, corral-sched and corralctl
 * (one file, so the operator CLI always talks to the Redis the API uses). */
#ifndef CORRAL_CONF_H
#define CORRAL_CONF_H

#include "accounts.h"
#include "data_addr.h"

#include <stddef.h>

/* A month of audit trail unless corral.conf says otherwise (decision 0045). */
#define AUDIT_RETENTION_DEFAULT_S (30L * 86400)

struct corral_conf {
    char redis_host[256];
    long redis_port;
    char redis_socket[256];
    char redis_user[256];          /* the Redis ACL user Corral logs in as */
    char redis_password_file[256]; /* its password (0600), sent with AUTH */
    char redis_password[256];      /* loaded from redis_password_file, never logged */
    /* Sentinel (decision 0058): when redis_sentinels ("host:port,...") is set,
     * the primary is asked of them by redis_master_name, not redis_host. */
    char redis_sentinels[256];
    char redis_master_name[256];
    char redis_sentinel_password_file[256]; /* optional: AUTH to the sentinels */
    char redis_sentinel_password[256];
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
    long poll_ms;            /* heartbeat long-poll wait */
    long lease_ms;           /* a worker silent this long is dead */
    long create_timeout_ms;  /* a create waits this long for "running" */
    long grace_ms;           /* then corral-sched reclaims after this much more */
    long sweep_ms;           /* corral-sched period */
    long paused_max_s;       /* a paused sandbox is killed after this long (decision 0044) */
    long template_ready_s;   /* a template's ready command's time (0: the create's wait less 5 s) */
    long max_templates;      /* a workspace's templates at most (decision 0080) */
    long template_upload_mb; /* a workspace's COPY uploads per 24 h, in MiB (0080) */
    long template_storage_mb; /* what a workspace's templates' images may add, MiB (0081) */
    long max_builds;          /* a workspace's builds at once (0081) */
    long redis_timeout_ms;
    long
        redis_cluster; /* 1: redis_host:redis_port is one node of a Redis Cluster (decision 0059) */
    /* worker_data_addrs, worker_data_networks / worker_data_ports: where a
     * worker's data_addr may point (the gateway connects there; decisions 32
     * and 61); data_listed once the file lists addresses or networks */
    struct data_addr_allow data_allow;
    int data_listed;
    long fleet_share; /* percent of the unscoped fleet's slots one workspace may hold */
    /* The operator's ceilings over the workspace limits, by enum ws_limit
     * (keys: ws_limit_defs[].ceiling_key; decision 0063). The timeout's is
     * sandbox_max_timeout_s: no create, setTimeout or refresh asks for longer. */
    long ceilings[WS_LIMIT_COUNT];
    long key_rate;          /* requests/s one verified credential may make (decision 0028) */
    long key_burst;         /* and how many of them at once */
    long audit_retention_s; /* audit events older than this are trimmed (decision 0045) */
    /* Corral's registry (issue 28, decision 0079): HOST:PORT the workers'
     * dockerd reach ("" = none: templates cannot be built or pulled), the
     * EC P-256 key that signs its tokens, and the service and issuer its
     * config names. */
    char registry[256];
    char registry_key[256];
    char registry_key_pem[2048]; /* loaded from registry_key when registry is set, never logged */
    char registry_service[256];
    char registry_issuer[256];
    /* The registry's API as the control plane reaches it (deletes, garbage
     * collection; "" = http://<registry>), and the registry's own config
     * file, which corralctl registry-gc hands its garbage-collect (0081). */
    char registry_url[256];
    char registry_config[256];
    /* Worker tunnels (decision 0087): the unix socket corral-tunneld takes
     * nginx's upgraded connections on, and the address and ports it holds
     * tunnels at ("127.0.0.1:7100-7163"), which the gateway connects to as a
     * tunnelled worker's data port, and the other gateway hosts' such ranges
     * (tunnel_peers: a tunnel may be held on any host); tunnel_allow is
     * both, parsed, this host's first. */
    char tunnel_listen[256];
    char tunnel_ports[256];
    char tunnel_peers[1024];
    struct data_addr_allow tunnel_allow;
};

/* Defaults, then the file (if path is not NULL), then validation and the
 * secret. 0, or -1 with err naming the bad key. */
int corral_conf_load(const char *path, struct corral_conf *c, char *err, size_t errlen);

/* One key set as the file would set it, after corral_conf_load: a daemon's
 * command-line override (corral-tunneld -p). 0, or -1 with err. */
int corral_conf_set(struct corral_conf *c, const char *key, const char *value, char *err,
                    size_t errlen);

/* Sets rc up for the Redis c names, logging in as c's redis_user (rc then
 * points into c, which must outlive it). */
struct rconn;
void corral_conf_rconn(const struct corral_conf *c, struct rconn *rc);

#endif
