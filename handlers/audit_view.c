#include "audit_view.h"

#include "sandbox_view.h"

/* Absent fields are null, so every event has the same keys. */
static void set_text(json_t *o, const char *name, const char *value)
{
    json_object_set_new(o, name, *value ? json_string(value) : json_null());
}

json_t *audit_event_view(const struct audit_entry *e)
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

json_t *audit_page_view(const struct audit_page *p)
{
    json_t *events = json_array();

    for (size_t i = 0; i < p->n; i++)
        json_array_append_new(events, audit_event_view(&p->v[i]));
    return json_pack("{s:o, s:o}", "events", events, "next",
                     *p->next ? json_string(p->next) : json_null());
}
