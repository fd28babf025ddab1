/* GET /v1/audit: the caller's workspace's audit trail, owner only (the
 * router refuses members with 403 owner_required). Oldest first; a page's
 * "next" is the cursor of the one after it, null at the end (decision 0045). */
#include "audit_query.h"
#include "handlers.h"
#include "respond.h"
#include "sandbox_view.h"

#include <stdio.h>

static void set_text(json_t *o, const char *name, const char *value)
{
    json_object_set_new(o, name, *value ? json_string(value) : json_null());
}

static json_t *event_view(const struct audit_entry *e)
{
    char when[40];
    json_t *o = json_object();

    format_time_ms(e->time_ms, when, sizeof(when));
    json_object_set_new(o, "id", json_string(e->id));
    json_object_set_new(o, "time", json_string(when));
    json_object_set_new(o, "time_ms", json_integer(e->time_ms));
    set_text(o, "event", e->event);
    set_text(o, "actor", e->actor);
    set_text(o, "sandbox_id", e->sandbox);
    set_text(o, "worker_id", e->worker);
    set_text(o, "isolation", e->tier);
    set_text(o, "credential_id", e->credential);
    set_text(o, "reason", e->reason);
    return o;
}

void h_audit(struct request *req)
{
    struct audit_query q;
    struct audit_page page;
    char err[160];
    json_t *events;

    if (audit_query_parse(req, &q, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (audit_read(req->rc, req->cred.ws, &q, &page) != 0) {
        respond_store_down(req);
        return;
    }
    events = json_array();
    for (size_t i = 0; i < page.n; i++)
        json_array_append_new(events, event_view(&page.v[i]));
    respond_json(req, 200,
                 json_pack("{s:o, s:o}", "events", events, "next",
                           *page.next ? json_string(page.next) : json_null()));
    audit_page_free(&page);
}
