/* worker_store.h: the worker record, its one home (issue 10).
 *
 * A worker of pool P is a hash (capabilities, usage, lease, secret mac, data
 * key, poll number) plus its pool's sets: every worker (wkall), the live ones
 * by load (placement's zset) and their lease deadlines. Everything that
 * writes or reads them goes through here; the key layout stays in keys.h. */
#ifndef CORRAL_WORKER_STORE_H
#define CORRAL_WORKER_STORE_H

#include "rconn.h"

#include <jansson.h>
#include <stddef.h>

/* One sandbox's entry in its worker's map: "ws cpu mem since". ws may be ""
 * (the unscoped fleet's own sandboxes), so the value then starts with a space;
 * only these two functions and WORKER_SLOT_LUA know that. */
struct worker_slot {
    char ws[33];
    double cpu;
    long mem;
    long long since_ms; /* when the slot was taken */
};
/* 0, or -1 when out is too small. */
int worker_slot_encode(const struct worker_slot *s, char *out, size_t len);
/* 0, or -1 when text is not a slot value (s then zeroed). */
int worker_slot_decode(const char *text, struct worker_slot *s);

/* The same decoding for the Lua scripts that read the map, spliced into their
 * bodies: slot_decode(v) returns ws, cpu, mem, since (nil when malformed). */
#define WORKER_SLOT_LUA                                                                            \
    "local function slot_decode(v)\n"                                                              \
    "  local ws, cpu, mem, since = string.match(v, '^([^ ]*) (%S+) (%S+) (%S+)$')\n"               \
    "  return ws, tonumber(cpu), tonumber(mem), tonumber(since)\n"                                 \
    "end\n"

/* The prefix every worker hash of pool shares ("...:worker:"), and the suffix
 * of a worker's sandbox map after its id: for scripts that walk a pool's
 * workers, which must not spell the layout themselves. */
void worker_key(char *out, size_t len, const char *pool, const char *wid);
void worker_key_prefix(char *out, size_t len, const char *pool);
const char *worker_sbs_suffix(void);

/* What a handshake declares; the strings must outlive the call. */
struct worker_caps {
    const char *hostname;
    const char *runtimes;      /* "runc:1,runsc:2," for the placement script */
    const char *runtimes_json; /* as the worker sent them, for the listing */
    const char *templates;     /* ",base,other," */
    const char *templates_json;
    int egress;
    long slots;
    double cpu;
    long mem;
    const char *data_addr; /* canonical IP:port, already checked */
    int public_ok;         /* its sandboxes may be public (decision 0062) */
};

struct worker_enrolment {
    const char *pool, *wid;
    const char *secret_mac, *join_token, *data_key;
    long long lease_until;
    int reset_usage; /* a new or dead worker starts with nothing placed on it */
};

/* Writes the whole enrolment at once. prev_key gets the data key the worker
 * had before ("" for a new one). 0, or -1 when Redis failed. */
int worker_enrol(struct rconn *rc, const struct worker_enrolment *e, const struct worker_caps *c,
                 char *prev_key, size_t prev_len);

/* Whether mac is the stored secret mac of pool's worker wid: 1 yes (*alive:
 * still enrolled and alive), 0 no, -1 Redis failed. */
int worker_check_mac(struct rconn *rc, const char *pool, const char *wid, const char *mac,
                     int *alive);

/* A heartbeat: the lease, and what the worker says stops it taking sandboxes
 * (problem "" when nothing does, NULL unchanged), and its warm pools (a JSON
 * array as GET /v1/workers shows it; NULL unchanged) with warm_ready, those
 * that hold a ready sandbox (",template:runtime,...": placement prefers
 * them). 0, or -1. */
int worker_renew(struct rconn *rc, const char *pool, const char *wid, long long lease_until,
                 const char *problem, const char *warm_json, const char *warm_ready);

/* A long-poll's number: bumped by each poll and each handshake, so that only
 * the latest poll takes commands. >0, or -1. */
long long worker_poll_ticket(struct rconn *rc, const char *pool, const char *wid);

/* 1 alive, 0 not (dead, deleted or never), -1 Redis failed. */
int worker_is_alive(struct rconn *rc, const char *pool, const char *wid);

/* Claims a worker's death (its lease passed, or force): state dead, out of
 * placement and leases. Only one caller gets 1; 0 not claimed, -1 Redis. */
int worker_claim_death(struct rconn *rc, const char *pool, const char *wid, long long now_ms,
                       int force);

/* The ids of pool's workers whose lease ended before now (at most 100). The
 * caller frees the list with worker_ids_free. */
struct worker_ids {
    size_t n;
    char (*id)[33];
};
int worker_expired(struct rconn *rc, const char *pool, long long now_ms, struct worker_ids *out);
void worker_ids_free(struct worker_ids *ids);
/* Every worker of pool, live or dead (wkall). 0, or -1. */
int worker_ids_all(struct rconn *rc, const char *pool, struct worker_ids *out);

/* A worker's sandbox map: the slots placement gave it. An entry whose value
 * does not decode has valid 0 (and a zeroed slot). */
struct worker_sandbox {
    char sbid[33];
    int valid;
    struct worker_slot slot;
};
struct worker_sandboxes {
    size_t n;
    struct worker_sandbox *v;
};
int worker_sandboxes(struct rconn *rc, const char *pool, const char *wid,
                     struct worker_sandboxes *out);
void worker_sandboxes_free(struct worker_sandboxes *s);
/* One entry: 1 found and decoded, 0 none (or malformed), -1 Redis failed. */
int worker_slot_get(struct rconn *rc, const char *pool, const char *wid, const char *sbid,
                    struct worker_slot *out);
/* Drops an entry without giving its slot back (a dead worker's). 0, or -1. */
int worker_slot_forget(struct rconn *rc, const char *pool, const char *wid, const char *sbid);

/* One worker as the listing shows it. */
struct worker {
    char wid[33];
    char state[16];
    char hostname[256];
    char runtimes_json[2048];
    char templates_json[2048];
    char data_addr[64];
    char problem[256];    /* "" when healthy */
    char warm_json[1024]; /* its warm pools as it last told them (decision 0082) */
    int egress;
    long slots, used, mem, mem_used;
    double cpu, cpu_used;
    long long lease_until;
};

struct worker_list {
    size_t n;
    struct worker *w;
};
enum worker_which { WORKERS_ALL, WORKERS_LIVE };
/* Every worker of pool (WORKERS_ALL: live or dead), or only those placement
 * may consider (WORKERS_LIVE). 0, or -1; free with worker_list_free. */
int worker_list(struct rconn *rc, const char *pool, enum worker_which which,
                struct worker_list *out);
void worker_list_free(struct worker_list *l);

/* The template names the live workers of ws's pool and of the unscoped fleet
 * offer, as the keys of an object (a pool Redis cannot be asked about adds
 * none). */
json_t *worker_templates_offered(struct rconn *rc, const char *ws);

/* A pool's live workers and what they may still take, in totals only. */
struct worker_free {
    long alive, slots, memory_mb;
    double cpu_cores;
};
int worker_pool_free(struct rconn *rc, const char *pool, struct worker_free *out);

/* Deleting a worker for good, in two steps around declaring it dead:
 * worker_unlist takes it out of its pool (1 removed, 0 was not there, -1),
 * worker_erase drops its record, so its secret stops working. */
int worker_unlist(struct rconn *rc, const char *pool, const char *wid);
int worker_erase(struct rconn *rc, const char *pool, const char *wid);

/* The worker half of the data plane's route: where its data port is, the key
 * it checks gateway signatures with. 1 found and alive, 0 not, -1 Redis. */
struct worker_route {
    char data_addr[256]; /* roomy: the gateway, not a cut here, refuses a bad one */
    char data_key[256];
    /* a worker behind its tunnel (decision 0087): data_addr is the daemon
     * port holding it, or TUNNEL_DATA_ADDR while no daemon does */
    int tunnel;
};
int worker_route(struct rconn *rc, const char *pool, const char *wid, struct worker_route *out);

#endif
