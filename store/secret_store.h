/* secret_store.h: a workspace's secrets (E2B's /secrets, decision 0090), the
 * one home of their records. A value is write-only: stored only sealed
 * (env_seal.h) under the server secret with the associated data
 * "secret/<ws>/<id>/<version>", so a sealed value copied to another
 * workspace, secret or version does not open. The last SECRET_VERSIONS_KEPT
 * versions are kept; only the current one is ever opened, and only by
 * secret_resolve, for a worker's egress proxy. Every change is audited by
 * name and version, never by value. */
#ifndef CORRAL_SECRET_STORE_H
#define CORRAL_SECRET_STORE_H

#include "rconn.h"

#include <stddef.h>

#define SECRET_ID_PREFIX "sec_" /* then 20 hex digits */
#define SECRET_ID_MAX 32
#define SECRET_NAME_MAX 64 /* a name must fit a route's path segment (request.h) */
#define SECRET_VALUE_MAX 65536
#define SECRET_VERSIONS_KEPT 10

#define AUDIT_SECRET_CREATE "secret_create" /* reason: {"secret", "id", "version"} */
#define AUDIT_SECRET_UPDATE "secret_update"
#define AUDIT_SECRET_DELETE "secret_delete"
/* A worker resolved secrets or tokens for a sandbox's egress: reason
 * {"host", "secrets": [names], "tokens": [names]}. */
#define AUDIT_EGRESS_RESOLVE "egress_resolve"
#define AUDIT_EGRESS_TRANSFORM "egress_transform" /* reason: host=, headers=, count= */

struct secret_record {
    char id[SECRET_ID_MAX], name[SECRET_NAME_MAX + 1];
    long long version, created_at, updated_at; /* ms since the epoch */
    char *metadata;                            /* JSON object text, malloc'd ("{}" none) */
};
void secret_record_free(struct secret_record *s);

/* 1 when s is spelled as a secret id (sec_<20 hex>). Pure. */
int secret_id_ok(const char *s);

/* A new secret: name (already canonical), its first value, metadata (JSON
 * object text). 1 created (*out filled), 0 the name is taken, -1 Redis or
 * the seal failed. Audited by actor. */
int secret_create(struct rconn *rc, const char *ws, const char *server_secret, const char *name,
                  const char *value, const char *metadata, const char *actor,
                  struct secret_record *out);

/* The secret ref names in ws: its id (sec_...) or its canonical name. 1
 * found, 0 none, -1 Redis. */
int secret_find(struct rconn *rc, const char *ws, const char *ref, struct secret_record *out);

/* A new current version holding value; metadata replaces the stored one
 * unless NULL. The oldest version beyond SECRET_VERSIONS_KEPT is dropped. 1
 * updated (*out the record after), 0 none, -1 Redis or the seal failed. */
int secret_update(struct rconn *rc, const char *ws, const char *server_secret, const char *ref,
                  const char *value, const char *metadata, const char *actor,
                  struct secret_record *out);

/* Removes the secret with every version. 1, 0 none, -1 Redis. */
int secret_delete(struct rconn *rc, const char *ws, const char *ref, const char *actor);

/* At most limit secrets of ws, oldest first, after the one whose id is after
 * ("" from the start); *more when there are others past them. 1, 0 after is
 * not a secret of ws, -1 Redis. Free with secret_list_free. */
int secret_list(struct rconn *rc, const char *ws, const char *after, size_t limit,
                struct secret_record **out, size_t *n, int *more);
void secret_list_free(struct secret_record *v, size_t n);

/* The current value of ws's secret name, opened, malloc'd into *value. 1, 0
 * no such secret, -1 Redis or it does not open (logged, never the value). */
int secret_resolve(struct rconn *rc, const char *ws, const char *name, const char *server_secret,
                   char **value);

#endif
