#include "telemetry_query.h"

#include "query_int_parse.h"
#include "respond.h"
#include "sandbox_store.h"

int query_int(struct request *req, const char *name, long long min, long long max, long long dflt,
              long long *out)
{
    char err[128];

    if (query_int_parse(req, name, min, max, dflt, out, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        return -1;
    }
    return 0;
}

int sandbox_visible(struct request *req, const char *sbid)
{
    struct sandbox_record rec;
    int found = token_is_id(sbid) ? sandbox_read(req->rc, req->cred.ws, sbid, &rec) : 0;

    if (found == 1)
        sandbox_record_free(&rec);
    if (found < 0)
        respond_store_down(req);
    else if (found == 0)
        NOT_FOUND_SANDBOX(req);
    return found == 1 ? 0 : -1;
}
