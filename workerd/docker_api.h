/* docker_api.h: dockerd's Engine API over its unix socket (libcurl + jansson).
 *
 * One struct docker per thread: it owns a curl handle, which keeps the
 * connection to dockerd open between calls. No `docker` CLI is ever run. */
#ifndef WORKERD_DOCKER_API_H
#define WORKERD_DOCKER_API_H

#include <curl/curl.h>
#include <jansson.h>
#include <stddef.h>

struct docker {
    CURL *curl;
    char sock[256];
};

int docker_init(struct docker *d, const char *sock);
void docker_close(struct docker *d);

/* How long an ordinary call may take: dockerd under load has taken seconds. */
#define DOCKER_TIMEOUT_MS 60000L

/* One request. body may be NULL. On a transport failure returns -1 with err
 * set (dockerd unreachable); otherwise 0, *status the HTTP status and *out the
 * parsed JSON answer (NULL when empty or not JSON; the caller decrefs). */
int docker_call(struct docker *d, const char *method, const char *path, json_t *body,
                long timeout_ms, long *status, json_t **out, char *err, size_t errlen);

/* A call expected to answer status ok within DOCKER_TIMEOUT_MS: 0; 2 when dockerd
 * answered 409 (a name taken, a state in the way), 1 any other status (err
 * names the method, path and dockerd's message); -1 dockerd did not answer. */
int docker_expect(struct docker *d, const char *method, const char *path, json_t *body, long ok,
                  char *err, size_t errlen);

/* Same, answer as raw bytes (logs); *buf is malloc'ed, caller frees. */
int docker_call_raw(struct docker *d, const char *method, const char *path, long timeout_ms,
                    long *status, char **buf, size_t *len, char *err, size_t errlen);

/* What a call may carry besides its method and path: a JSON body, one extra
 * header ("Name: value", e.g. X-Registry-Auth; never logged), and a sink that
 * takes the answer's bytes as they come (a libcurl write function) instead
 * of their being collected. */
struct docker_req {
    json_t *body;
    const char *header;
    size_t (*sink)(char *p, size_t size, size_t n, void *ud);
    void *ud;
};

/* One request as r says (r may be NULL); -1 as docker_call, else 0 with
 * *status and the answer in *buf (malloc'ed, *len bytes; NULL with a sink). */
int docker_request(struct docker *d, const char *method, const char *path,
                   const struct docker_req *r, long timeout_ms, long *status, char **buf,
                   size_t *len, char *err, size_t errlen);

/* PUT of len bytes of body (e.g. a tar archive into a container); -1 as
 * docker_call, else 0 with *status (the answer's body is dropped). */
int docker_put_bytes(struct docker *d, const char *path, const void *body, size_t len,
                     const char *content_type, long timeout_ms, long *status, char *err,
                     size_t errlen);

/* The "message" of a Docker error answer, or a fallback. */
const char *docker_errmsg(json_t *answer, long status);

/* GET /_ping: 0 when dockerd answers. */
int docker_ping(struct docker *d, char *err, size_t errlen);

/* filters (taken: freed here) as the URL-encoded JSON a `?filters=` query
 * wants, e.g. {"label": ["corral.worker=…"]}; NULL when out of memory. Free
 * with curl_free(). */
char *docker_filters(struct docker *d, json_t *filters);

#endif
