#include "telemetry_query.h"

#include "respond.h"
#include "sandbox_store.h"

#include <stdlib.h>

int query_int(struct request *req, const char *name, long long min, long long max, long long dflt,
              long long *out)
{
    char text[32], *end;
    int given = request_query_strict(req, name, text, sizeof(text));
    long long v = dflt;

    if (given > 0) {
        v = strtoll(text, &end, 10);
        if (end == text || *end || v < min || v > max)
            given = -1;
    }
    if (given < 0) {
        respond_error(req, 400, "%s: must be an integer in [%lld, %lld]", name, min, max);
        return -1;
    }
    *out = v;
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
