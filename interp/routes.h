/* routes.h: corral-interp's HTTP surface, what @e2b/code-interpreter calls
 * on port 49999 (decision 0088): GET /health, POST /execute (NDJSON,
 * streamed), POST and GET /contexts, DELETE /contexts/{id}, POST
 * /contexts/{id}/restart. Errors in the {"code","message"} shape. */
#ifndef CORRAL_INTERP_ROUTES_H
#define CORRAL_INTERP_ROUTES_H

#include "http.h"

void routes_serve(struct http_req *r);

#endif
