/* POST /v1/worker/telemetry: a worker's samples and log lines of its
 * sandboxes, sent beside the long-poll every metrics interval (decision 0047).
 *
 * Authenticated as the heartbeat is. A worker writes only the sandboxes its
 * map holds (worker_slot_get, the check every report passes): another
 * worker's sandbox, or one never placed, is refused by id and nothing of it
 * is written. The whole body is checked before anything is written. */
#include "clock.h"
#include "handlers.h"
#include "respond.h"
#include "telemetry.h"
#include "telemetry_parse.h"
#include "worker_batch.h"
#include "worker_registry.h"
#include "worker_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 written, 0 refused (not held by this worker), -1 Redis. */
static int write_item(struct request *req, const char *wid, const void *elem)
{
    const struct telemetry_item *it = elem;
    struct worker_slot slot;
    int held = worker_slot_get(req->rc, req->cred.ws, wid, it->sbid, &slot);
    struct telemetry_push p = {it->metric_ms, it->metric, it->n, it->ms,
                               (const char *const *)it->logs};

    if (held != 1)
        return held;
    return telemetry_write(req->rc, slot.ws, it->sbid, &p) == 0 ? 1 : -1;
}

static json_t *item_id(const void *elem, size_t i)
{
    (void)i;
    return json_string(((const struct telemetry_item *)elem)->sbid);
}

void h_worker_telemetry(struct request *req)
{
    char wid[33], err[256];
    json_t *body = request_json_body(req);
    struct telemetry_body b;
    int st;

    if (!body)
        return;
    st = telemetry_body_parse(body, clock_now_ms(), &b, err, sizeof(err));
    if (st != 0)
        respond_error(req, st, "%s", err);
    else if (worker_authenticate(req, wid) == 1)
        worker_batch_write(req, wid,
                           &(struct worker_batch){.v = b.items,
                                                  .n = b.n,
                                                  .size = sizeof(*b.items),
                                                  .write = write_item,
                                                  .refused_id = item_id});
    telemetry_body_free(&b);
    json_decref(body);
}
