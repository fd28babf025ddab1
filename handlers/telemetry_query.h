/* telemetry_query.h: what the metrics and logs routes share: their integer
 * query parameters, and whether the caller may see a sandbox at all. */
#ifndef CORRAL_TELEMETRY_QUERY_H
#define CORRAL_TELEMETRY_QUERY_H

#include "request.h"

/* An integer parameter in [min, max]; dflt when absent. 0, or -1 after
 * answering 400 naming it. */
int query_int(struct request *req, const char *name, long long min, long long max, long long dflt,
              long long *out);

/* sbid is a sandbox of the caller's workspace, live or ended, whose record is
 * still kept: 0, or -1 after answering 404 (another workspace's sandbox is
 * answered the same, decision 0033) or 503. */
int sandbox_visible(struct request *req, const char *sbid);

#endif
