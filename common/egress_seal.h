/* egress_seal.h: the secrets inside an egress policy (its rules' header
 * values, its upstream proxy's password: handlers/e2b_network_parse.h) sealed
 * at rest like env vars (env_seal.h), bound to the workspace, since a policy
 * moves between its sandboxes (fork, snapshot, a network update). A sealed
 * value is {"sealed": "v1...."} where the plain one was a string. */
#ifndef CORRAL_EGRESS_SEAL_H
#define CORRAL_EGRESS_SEAL_H

#include <jansson.h>

/* Seals every secret of policy in place. 0, or -1 (cipher or memory). */
int egress_seal(const char *server_secret, const char *ws, json_t *policy);

/* Opens every sealed secret of policy in place. 0, or -1 when one does not
 * open (another workspace's, another secret, altered). */
int egress_open(const char *server_secret, const char *ws, json_t *policy);

/* Shows policy without its secrets: header values "***", no password. */
void egress_mask(json_t *policy);

/* The policy text with its secrets sealed (malloc'd); text itself when it has
 * none to seal; NULL on failure. text NULL: NULL. */
char *egress_seal_text(const char *server_secret, const char *ws, const char *text);

#endif
