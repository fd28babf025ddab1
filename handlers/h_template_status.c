/* GET /templates/{id}/builds/{bid}/status (E2B's TemplateBuildInfo): the
 * build's state and its log from logsOffset, as the SDK polls it while a
 * build runs. A build whose sandbox ended without its worker's last word is
 * answered (and recorded) as failed, with why. */
#include "handlers.h"
#include "query_int_parse.h"
#include "respond.h"
#include "template.h"

#include <string.h>

static json_t *messages(json_t *entries)
{
    json_t *out = json_array(), *e;
    size_t i;

    json_array_foreach(entries, i, e)
    {
        const char *m = json_string_value(json_object_get(e, "message"));
        json_array_append_new(out, json_string(m ? m : ""));
    }
    return out;
}

static json_t *reason_of(struct request *req, const struct build_record *b)
{
    json_t *tail;

    if (b->state != BUILD_STATE_ERROR)
        return NULL;
    /* The last lines, which say what failed. */
    tail = build_log_range(req->rc, req->cred.ws, b->id, -20, 20);
    return json_pack("{s:s, s:s, s:o}", "message", b->reason, "step", b->step, "logEntries",
                     tail ? tail : json_array());
}

static int read_build(struct request *req, struct build_record *b)
{
    int found = template_id_ok(req->params[0]) && build_id_ok(req->params[1])
                    ? build_read(req->rc, req->cred.ws, req->params[1], b)
                    : 0;

    if (found < 0)
        respond_store_down(req);
    else if (found == 0 || strcmp(b->template_id, req->params[0]) != 0) {
        respond_error(req, 404, "build '%s' of template '%s' not found", req->params[1],
                      req->params[0]);
        found = 0;
    }
    return found == 1 ? 0 : -1;
}

void h_e2b_build_status(struct request *req)
{
    struct build_record b;
    long long offset = 0, limit = 100;
    char err[160];
    json_t *logs, *out, *reason;

    if (query_int_parse(req, "logsOffset", 0, 1000000, 0, &offset, err, sizeof(err)) != 0 ||
        query_int_parse(req, "limit", 0, 100, 100, &limit, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (read_build(req, &b) != 0)
        return;
    if (template_build_check(req->rc, req->cred.ws, &b) != 0 ||
        !(logs = build_log_range(req->rc, req->cred.ws, b.id, (long)offset, (long)limit))) {
        respond_store_down(req);
        return;
    }
    out = json_pack("{s:s, s:s, s:s, s:o, s:o}", "templateID", b.template_id, "buildID", b.id,
                    "status", b.state_text, "logs", messages(logs), "logEntries", logs);
    reason = reason_of(req, &b);
    if (reason)
        json_object_set_new(out, "reason", reason);
    respond_json(req, 200, out);
}
