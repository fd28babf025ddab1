/* template_store.h: a workspace's templates, their builds and the files
 * their COPY steps upload (issue 28, docs/templates.md), the one home of
 * their records. Another workspace's template is read only from its own
 * slot: a lookup never crosses workspaces. */
#ifndef CORRAL_TEMPLATE_STORE_H
#define CORRAL_TEMPLATE_STORE_H

#include "rconn.h"

#include <jansson.h>
#include <stddef.h>

#define TEMPLATE_PREFIX "tpl-"
#define BUILD_PREFIX "bld-"
#define TEMPLATE_ID_MAX 32
#define TEMPLATE_NAME_MAX 129
#define TEMPLATE_IMAGE_MAX 256
#define TEMPLATE_FILE_MAX (64L << 20) /* one COPY step's upload (413 above) */
#define BUILD_LOGS_MAX 20000          /* entries a build keeps */

enum build_state {
    BUILD_STATE_UNKNOWN = 0,
    BUILD_STATE_WAITING, /* created, its steps not yet sent */
    BUILD_STATE_BUILDING,
    BUILD_STATE_READY,
    BUILD_STATE_ERROR,
};
const char *build_state_name(enum build_state s);
enum build_state build_state_parse(const char *word);

struct template_record {
    char id[TEMPLATE_ID_MAX], name[TEMPLATE_NAME_MAX], build[TEMPLATE_ID_MAX];
    char image[TEMPLATE_IMAGE_MAX], root[65], building[TEMPLATE_ID_MAX];
    char start_cmd[1024], ready_cmd[1024], user[33], workdir[256];
    long cpu, memory_mb, build_count;
    long long created_at, updated_at;
    int public_;
};

struct build_record {
    char id[TEMPLATE_ID_MAX], template_id[TEMPLATE_ID_MAX], worker[33], sandbox[33];
    char step[16], reason[512], state_text[16], image[TEMPLATE_IMAGE_MAX];
    /* The recipe, recorded when the build starts: what the template becomes
     * once it is ready, and the tags it then gets (JSON array text). */
    char root[65], start_cmd[1024], ready_cmd[1024], user[33], workdir[256];
    char target[TEMPLATE_IMAGE_MAX], tags[1200];
    enum build_state state;
    long cpu, memory_mb;
    long long size_bytes; /* what the build added over its base (the worker's word) */
    long long created_at, updated_at, finished_at;
};

/* 1 when id is spelled as a template (tpl-<20 hex>) or build (bld-) id. Pure. */
int template_id_ok(const char *id);
int build_id_ok(const char *id);

/* Templates. ref is an id or a name. 1 found, 0 absent, -1 Redis. */
int template_find(struct rconn *rc, const char *ws, const char *ref, struct template_record *out);
/* The template named name, made (with cpu, memory_mb) when absent and the
 * workspace has fewer than max: 1 made, 0 it existed (out as stored), -2 the
 * workspace has max already, -1 Redis. */
int template_get_or_make(struct rconn *rc, const char *ws, const char *name, long cpu,
                         long memory_mb, long max, struct template_record *out);
int template_list(struct rconn *rc, const char *ws, struct template_record **out, size_t *n);
/* Removes the template, its name, tags, builds and logs: 1, 0 absent, -1. */
int template_remove(struct rconn *rc, const char *ws, const char *id);
int template_set_public(struct rconn *rc, const char *ws, const char *id, int public_);
/* A build is ready: the template's image, commands and build become its. */
int template_built(struct rconn *rc, const char *ws, const struct template_record *t);

/* Tags: tag -> build. tags_json: [{tag, buildID, createdAt ms}] (caller decrefs). */
int template_tag_set(struct rconn *rc, const char *ws, const char *id, const char *tag,
                     const char *bid);
int template_tag_get(struct rconn *rc, const char *ws, const char *id, const char *tag,
                     char bid[TEMPLATE_ID_MAX]);
int template_tag_remove(struct rconn *rc, const char *ws, const char *id, const char *tag);
json_t *template_tags(struct rconn *rc, const char *ws, const char *id);

/* Builds. */
int build_make(struct rconn *rc, const char *ws, const char *tpl, long cpu, long memory_mb,
               char bid[TEMPLATE_ID_MAX]);
int build_read(struct rconn *rc, const char *ws, const char *bid, struct build_record *out);
/* The workspace a build id belongs to (worker routes carry only the id):
 * 1, 0 unknown, -1. */
int build_workspace(struct rconn *rc, const char *bid, char ws[33]);
/* Takes one of the workspace's max concurrent build slots for bid (builds
 * that ended, or started more than stale_ms ago, give theirs back): 1, 0 all
 * max are taken, -1 Redis. build_end gives it back. */
int build_slot_take(struct rconn *rc, const char *ws, const char *bid, long max,
                    long long stale_ms);
/* The bytes a ready build added (its worker's report). */
int build_size_set(struct rconn *rc, const char *ws, const char *bid, long long bytes);
/* waiting -> building on sandbox sbid of worker wid: 1, 0 not waiting, -1. */
int build_begin(struct rconn *rc, const char *ws, const char *bid, const char *wid,
                const char *sbid);
/* building -> ready or error, heard only from wid (NULL: anyone, for the
 * control plane's own verdicts): 1 ended now, 0 not building or not wid's, -1. */
int build_end(struct rconn *rc, const char *ws, const char *bid, const char *wid,
              enum build_state to, const char *step, const char *reason, const char *image);
/* The tags a build gives its template once ready (JSON array), kept until then. */
int build_tags_stash(struct rconn *rc, const char *ws, const char *bid, json_t *tags);
/* Records b's recipe fields (root .. tags) in build b->id. */
int build_recipe_set(struct rconn *rc, const char *ws, const struct build_record *b);
/* Appends entries (JSON objects) to the build's log, while it is building. */
int build_log_append(struct rconn *rc, const char *ws, const char *bid, json_t *entries);
/* Entries from offset, at most limit; NULL on a Redis failure. */
json_t *build_log_range(struct rconn *rc, const char *ws, const char *bid, long offset, long limit);
/* Builds of a template, newest first, as struct build_record. */
int build_list(struct rconn *rc, const char *ws, const char *tpl, struct build_record **out,
               size_t *n);

/* Whether the worker wid may push to repository repo until expires (s): 1
 * when it holds the sandbox of the build in progress whose target is there
 * (recorded as a push in flight, registry_gate.h), 0 when not, -2 when a
 * registry garbage collection holds pushes, -1 on a Redis failure. */
int build_push_admit(struct rconn *rc, const char *wid, const char *repo, long long expires);

/* Files a COPY step uploaded, by the SDK's hash (64 hex), kept 24 h. */
int template_file_exists(struct rconn *rc, const char *ws, const char *hash);
/* 0, -2 the workspace's budget (bytes uploaded in 24 h) would be passed,
 * -1 Redis. */
int template_file_put(struct rconn *rc, const char *ws, const char *hash, const char *data,
                      size_t len, long long budget);
/* *data malloc'ed (caller frees): 1, 0 absent, -1. */
int template_file_get(struct rconn *rc, const char *ws, const char *hash, char **data, size_t *len);
/* An upload URL's nonce, used once: 1 first use, 0 used before, -1. */
int template_upload_claim(struct rconn *rc, const char *ws, const char *nonce, long ttl_s);

#endif
