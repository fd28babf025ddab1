/* A warm sandbox's envd (decision 0082): started with an init secret instead
 * of an access token, it serves nothing but GET /health and POST /init until
 * workerd claims it for a sandbox through POST /init. */
#ifndef ENVD_INIT_H
#define ENVD_INIT_H

#include "http.h"

#define INIT_SECRET_ENV "CORRAL_ENVD_INIT_TOKEN"

/* Takes the init secret from the environment and wipes it (as the access
 * token). warm (-warm) requires one; without -warm one is refused: a warm
 * envd must never start open. 0 ok; -1 with the reason on stderr. */
int init_take_secret(int warm);

/* True while a warm envd has not been claimed. */
int init_pending(void);

/* POST /init: X-Corral-Init must equal the secret; the body (init_parse.h)
 * is applied once, before any process exists; 204, then every later /init
 * is 409. */
void init_handle(struct http_req *r);

#endif
