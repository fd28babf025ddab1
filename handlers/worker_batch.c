/* A worker's batch written and answered (worker_batch.h). */
#include "worker_batch.h"
#include "respond.h"

void worker_batch_write(struct request *req, const char *wid, const struct worker_batch *b)
{
    json_t *refused = json_array();
    size_t accepted = 0, i;

    for (i = 0; i < b->n; i++) {
        const void *elem = (const char *)b->v + i * b->size;
        int w = b->write(req, wid, elem);
        if (w < 0)
            break;
        if (w == 0)
            json_array_append_new(refused, b->refused_id(elem, i));
        accepted += (size_t)w;
    }
    if (i < b->n) {
        json_decref(refused);
        respond_store_down(req);
        return;
    }
    respond_json(req, 200,
                 json_pack("{s:I, s:o}", "accepted", (json_int_t)accepted, "refused", refused));
}
