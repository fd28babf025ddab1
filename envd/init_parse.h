/* The body of POST /init: what a warm sandbox is told when it is claimed
 * (decision 0082). Pure; tests/envd/unit_init.c checks it. */
#ifndef ENVD_INIT_PARSE_H
#define ENVD_INIT_PARSE_H

#include <jansson.h>
#include <stddef.h>

#define INIT_TOKEN_MAX 4096
#define INIT_ENV_MAX 1024
#define INIT_NAME_MAX 255

struct init_req {
    char *access_token;    /* NULL: the sandbox is not secure */
    json_t *env_vars;      /* an object of strings (owned), never NULL once parsed */
    char default_user[64]; /* "" keeps envd's -user */
};

/* body (len bytes) into out: an object with the optional keys accessToken
 * (1..INIT_TOKEN_MAX printable bytes), envVars (at most INIT_ENV_MAX names
 * [A-Za-z_][A-Za-z0-9_]* to strings without NUL) and defaultUser (a user
 * name); any other key, type or value refused. 0 ok; -1 with msg naming the
 * fault (out then holds nothing to free). */
int init_parse(const char *body, size_t len, struct init_req *out, char *msg, size_t msgsz);
void init_req_free(struct init_req *r);

#endif
