/* rcluster.h: Redis Cluster routing for rconn (decision 0059). hiredis has
 * no cluster client; this is the part rconn needs: which slot a command's
 * key hashes to, which key a command is routed by, and where a MOVED or ASK
 * reply sends it. rconn keeps one connection per node and learns the slot
 * map from MOVED replies: no map to load, and a resharding corrects itself. */
#ifndef CORRAL_RCLUSTER_H
#define CORRAL_RCLUSTER_H

#include <hiredis/hiredis.h>
#include <stddef.h>

#define RCLUSTER_SLOTS 16384
#define RCLUSTER_NODES 16

struct rcluster_node {
    char host[64];
    int port;
    redisContext *ctx; /* NULL while not connected, and for the node rconn is on */
};

struct rcluster {
    struct rcluster_node node[RCLUSTER_NODES];
    int n;                                   /* nodes known; node[0] is the seed */
    int cur;                                 /* the node rconn's ctx is connected to */
    unsigned char slot_node[RCLUSTER_SLOTS]; /* node index + 1 serving a slot; 0: not known */
};

/* The slot of a key: CRC16 (XMODEM) of its hash tag ("{...}", non-empty)
 * or of the whole key, mod 16384. Pure. */
unsigned rcluster_keyslot(const char *key, size_t len);

/* The key a formatted command (RESP array of bulk strings) is routed by:
 * the first key of EVAL/EVALSHA, the first stream of XREAD/XREADGROUP, the
 * first argument of any other command. 0 with key and len, -1 when it has
 * none (a keyless command, a script with no keys, or bytes that are not a
 * command). Pure. */
int rcluster_command_key(const char *cmd, size_t cmdlen, const char **key, size_t *keylen);

/* A "MOVED <slot> <host>:<port>" or "ASK <slot> <host>:<port>" error's
 * target: 0 with ask (1 for ASK), slot, host and port; -1 for any other
 * error. Pure. */
int rcluster_redirect(const char *err, int *ask, int *slot, char *host, size_t hostlen, int *port);

/* The index of host:port among the known nodes, added if new; -1 when the
 * table is full. */
int rcluster_node_index(struct rcluster *cl, const char *host, int port);

#endif
