/* request.h: one FastCGI request as the handlers see it. */
#ifndef CORRAL_REQUEST_H
#define CORRAL_REQUEST_H

#include "accounts.h"
#include "audit.h"
#include "server.h"
#include "token.h"
#include "url_decode.h" /* handlers decode query pairs with it */

#include <fcgiapp.h>
#include <jansson.h>

#define REQUEST_MAX_PARAMS 2

struct request {
    FCGX_Request *fcgi;
    struct worker_thread *thread;
    struct rconn *rc;
    const struct corral_conf *conf;
    const char *method;
    char path[512];
    const char *query;
    const char *request_id;
    char params[REQUEST_MAX_PARAMS][80]; /* {id} segments of the matched route */
    struct token cred;                   /* the caller's credential, once checked */
    enum role role;
    char actor[AUDIT_ACTOR_MAX]; /* "key:<id>" once an API key verified: who the audit names */
    int responded;
    int status;      /* the answer's, once responded */
    char error[512]; /* an error answer's message, for the log */
    int quiet;       /* a high-volume route: its successes are not logged */
};

/* Reads FastCGI params into req. */
void request_init(struct request *req, FCGX_Request *fcgi, struct worker_thread *t);
const char *request_header(struct request *req, const char *cgi_name);

/* One log line for an answered request (its context: request id, workspace,
 * sandbox or worker); successes of quiet routes are left to nginx's log. */
void request_log(const struct request *req, long elapsed_ms);

/* Reads and parses a JSON object body. Returns it, or NULL after answering
 * 413 (too large) or 400 (malformed, not an object). */
json_t *request_json_body(struct request *req);
/* The same, but no body at all stands for {} (a POST whose fields are all
 * optional). */
json_t *request_json_optional(struct request *req);

/* Copies the URL-decoded value of a query parameter; 1 found, 0 absent. */
int request_query(const struct request *req, const char *name, char *out, size_t outlen);
/* The same, telling a present but unreadable one (badly encoded, or longer
 * than outlen) from an absent one: 1 found, 0 absent, -1 unreadable. */
int request_query_strict(const struct request *req, const char *name, char *out, size_t outlen);

#endif
