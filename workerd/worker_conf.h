/* worker_conf.h: workerd's configuration (conf/workerd.conf, then flags).
 *
 * One struct, loaded and validated once at start. Every refusal names the key
 * or file at fault, because an operator reads it on a terminal. The join token
 * is read here from a file that only its owner may read; it is kept in memory
 * and never logged or put on a command line. */
#ifndef WORKERD_WORKER_CONF_H
#define WORKERD_WORKER_CONF_H

#include "warm_conf.h"

#include <stddef.h>

#define WCONF_MAX_TEMPLATES 32
#define WCONF_STR 256
#define WCONF_MAX_EXPOSE 64

/* -mode agent (decision 0054): sandboxes are envd sessions on this machine,
 * as the user running workerd; the gate's flags go to each envd as given. */
struct agent_conf {
    int on;                    /* mode = agent (else docker) */
    char tmpl[65];             /* the one template advertised (default "base") */
    char work_tree[WCONF_STR]; /* default: the current directory */
    char permission_mode[16];  /* "", prompt or strict */
    char gate_dir[WCONF_STR];  /* default: $HOME/.corral-gate */
    char policy[WCONF_STR];    /* "" none */
    char os_sandbox[16];       /* "" or bwrap */
    long ask_timeout_s;        /* 0: envd's default */
    char conf_file[WCONF_STR]; /* hardlocked, as is token_file */
    /* The data plane's walls (decision 0062): the ports of this machine the
     * gateway may reach besides envd's (expose_ports; default none), and
     * whether a sandbox may be public (allow_public_traffic; default no). */
    unsigned short expose[WCONF_MAX_EXPOSE];
    int n_expose;
    int public_traffic;
};

/* A template is an image. Its command is envd, always (see containers.h). */
struct wtemplate {
    char name[65];
    char image[WCONF_STR];
};

struct worker_conf {
    char control_url[WCONF_STR]; /* https://host:port of nginx in front of corral-api */
    char ca_file[WCONF_STR];
    char token_file[WCONF_STR];
    char join_token[WCONF_STR]; /* loaded from token_file; secret */
    char data_addr[WCONF_STR];
    char docker_socket[WCONF_STR];
    char state_dir[WCONF_STR];
    char hostname[WCONF_STR];
    char probe_image[WCONF_STR]; /* image of the runtime probe container */
    char envd_bin[WCONF_STR];    /* envd, bind-mounted read-only into every sandbox */
    char egress_bin[WCONF_STR];  /* corral-egress, bind-mounted into each egress proxy */
    char egress_image[WCONF_STR];
    char egress_hosts[WCONF_STR]; /* "name:ip,..." added to each proxy's /etc/hosts */
    /* The roots an intercepting proxy checks real servers against (decision
     * 0091): default the host's bundle, /etc/ssl/certs/ca-certificates.crt. */
    char egress_roots[WCONF_STR];
    char egress_subnet[64];      /* the host's egress network: one address per proxy */
    char dns_servers[WCONF_STR]; /* resolvers open to sandboxes on port 53 (else resolv.conf's) */
    long slots;                  /* 0 until set: memory_mb / WCONF_DEFAULT_SANDBOX_MB */
    double cpu_cores;            /* 0 until set: nproc x cpu_overcommit */
    double cpu_overcommit;       /* cpu_cores are scheduling hints, not reservations */
    long memory_mb;
    long backoff_max_ms; /* cap of the reconnect backoff */
    long probe_timeout_ms;
    long envd_ready_ms;         /* how long a create waits for envd's /health */
    long egress_pool;           /* egress proxies kept started ahead of need (egress_pool.h) */
    long metrics_interval_ms;   /* how often each sandbox's stats and logs are sampled */
    long layer_cache_max_age_s; /* cached build layers older than this go (0: kept) */
    long fast_remove;           /* btrfs subvolumes dropped ahead of dockerd (subvol_drop.h) */
    int tunnel; /* tunnel = on: reached through its tunnel, the data port on a unix socket (0087) */
    struct warm_kind warm[WARM_KINDS_MAX]; /* warm_pool: sandboxes started ahead (0082) */
    int n_warm;
    int warm_set; /* warm_pool was given (else WCONF_DEFAULT_WARM, when base is served) */
    int envd_require_signature_expiration; /* envd refuses signed URLs without an expiry */
    struct agent_conf agent;               /* mode = agent: sessions on this machine */
    int n_templates;
    struct wtemplate templates[WCONF_MAX_TEMPLATES];
};

/* A few warm sandboxes of the template every fleet serves, on the default
 * runtime; none of costlier runtimes unless configured (decision 0082). */
#define WCONF_DEFAULT_WARM "base=2"

/* Memory of a sandbox created without memory_mb: one slot per such sandbox. */
#define WCONF_DEFAULT_SANDBOX_MB 512
#define WCONF_DEFAULT_OVERCOMMIT 32.0

/* Defaults (MemTotal, /var/run/docker.sock, envd next to the workerd binary
 * ...); slots and cpu_cores are left for wconf_capacity. */
void wconf_defaults(struct worker_conf *c);
/* Fills what was not set (decision 40): cpu_cores = nproc x cpu_overcommit,
 * slots = memory_mb / WCONF_DEFAULT_SANDBOX_MB (at least 1, at most 10000), so
 * that memory, which docker enforces, is the bound. */
void wconf_capacity(struct worker_conf *c, long nproc);
/* <directory of the running binary>/name. */
void wconf_default_bin(char *out, size_t len, const char *name);
/* 0 when path is an absolute path to an executable file; -1 naming key. */
int wconf_check_bin(const char *key, const char *path, char *err, size_t errlen);
/* Applies one key = value (file line or flag). 0, or -1 with err set. */
int wconf_set(void *ud, const char *key, const char *value, char *err, size_t errlen);
/* warm_pool's default when it was not given (WCONF_DEFAULT_WARM for a
 * Docker worker serving template base). 0, or -1 with err. */
int wconf_warm_default(struct worker_conf *c, char *err, size_t errlen);

/* Checks what must be present and loads the join token. 0, or -1 with err. */
int wconf_finish(struct worker_conf *c, char *err, size_t errlen);
const struct wtemplate *wconf_template(const struct worker_conf *c, const char *name);
void wconf_free(struct worker_conf *c);

#endif
