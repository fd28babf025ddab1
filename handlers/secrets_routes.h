/* secrets_routes.h: the routes of decision 0090, declared beside handlers.h
 * so that router.c's table can name them: E2B's /secrets (h_secrets.c), the
 * workspace's workload identity (h_identity.c) and a worker's resolve of
 * secrets and tokens for its egress proxy (h_egress_resolve.c). */
#ifndef CORRAL_SECRETS_ROUTES_H
#define CORRAL_SECRETS_ROUTES_H

#include "request.h"

void h_secrets_list(struct request *req);
void h_secret_create(struct request *req);
void h_secret_get(struct request *req);
void h_secret_update(struct request *req);
void h_secret_delete(struct request *req);

void h_identity_discovery(struct request *req);
void h_identity_jwks(struct request *req);
void h_identity_rotate(struct request *req);

void h_worker_egress_resolve(struct request *req);
/* Its proxy's counts of transformed requests, for the audit (h_egress_audit.c). */
void h_worker_egress_audit(struct request *req);

#endif
