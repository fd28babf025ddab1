/* secrets_parse.h: what E2B's /secrets routes read (pure: h_secrets.c reads
 * the request and answers; decision 0090): a secret's name or reference, a
 * create's and an update's body, the list's query. */
#ifndef CORRAL_SECRETS_PARSE_H
#define CORRAL_SECRETS_PARSE_H

#include "request.h"
#include "secret_store.h"

#include <jansson.h>
#include <stddef.h>

#define SECRET_META_ENTRIES_MAX 32
#define SECRET_META_KEY_MAX 128    /* bytes */
#define SECRET_META_VALUE_MAX 1024 /* bytes */
#define SECRET_META_TOTAL_MAX 8192 /* bytes of every key and value */
#define SECRET_LIST_LIMIT_MAX 100  /* the default too */

/* A name as stored: lower-cased, then 1-SECRET_NAME_MAX of [a-z0-9._-],
 * not starting "sec_" (the ids' prefix). 0 with out, or -1 with err. */
int secret_name_parse(const char *in, char out[SECRET_NAME_MAX + 1], char *err, size_t errlen);

/* A path's {secretID}: an id (sec_<20 hex>) as it is, else a name made
 * canonical. 0, or -1 when it can be neither (the route answers 404: no
 * such secret, as for any other). */
int secret_ref_parse(const char *in, char out[SECRET_NAME_MAX + 1]);

struct secret_body {
    char name[SECRET_NAME_MAX + 1]; /* create only */
    const char *value;              /* points into the body */
    char *metadata;                 /* JSON object text, malloc'd; NULL when not given */
};

/* create: {name, value, metadata?}; else an update's {value, metadata?}.
 * The value: a non-empty string of at most SECRET_VALUE_MAX bytes, no NUL.
 * The metadata: an object of strings within the limits above (null: not
 * given). 0 with b (free with secret_body_free), or -1 with err naming the
 * field (never quoting the value). */
int secret_body_parse(const json_t *body, int create, struct secret_body *b, char *err,
                      size_t errlen);
void secret_body_free(struct secret_body *b);

/* limit (1-SECRET_LIST_LIMIT_MAX, default the maximum) and nextToken (a
 * secret id, "" absent). 0, or -1 with err. */
int secret_list_query_parse(const struct request *req, size_t *limit, char after[SECRET_ID_MAX],
                            char *err, size_t errlen);

#endif
