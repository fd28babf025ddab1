#include "worker_view.h"

/* What placement may still give this worker: its totals less what the
 * sandboxes placed on it hold (the used, cpu_used, mem_used counters). */
static void worker_view_free(json_t *v, const struct worker *w)
{
    long long fs = w->slots - w->used, fm = w->mem - w->mem_used;
    double fc = w->cpu - w->cpu_used;

    json_object_set_new(v, "free_slots", json_integer(fs > 0 ? fs : 0));
    json_object_set_new(v, "free_cpu_cores",
                        json_real(fc > 0 ? (double)(long long)(fc * 1000 + 0.5) / 1000 : 0));
    json_object_set_new(v, "free_memory_mb", json_integer(fm > 0 ? fm : 0));
}

json_t *worker_view(const struct worker *w)
{
    json_t *runtimes = json_loads(w->runtimes_json[0] ? w->runtimes_json : "[]", 0, NULL);
    json_t *templates = json_loads(w->templates_json[0] ? w->templates_json : "[]", 0, NULL);
    json_t *v = json_pack("{s:s, s:s, s:s, s:o, s:o, s:b, s:I, s:I, s:f, s:I, s:s, s:I}",
                          "worker_id", w->wid, "hostname", w->hostname, "state", w->state,
                          "runtimes", runtimes ? runtimes : json_array(), "templates",
                          templates ? templates : json_array(), "egress", w->egress, "slots",
                          (json_int_t)w->slots, "used_slots", (json_int_t)w->used, "cpu_cores",
                          w->cpu, "memory_mb", (json_int_t)w->mem, "data_addr", w->data_addr,
                          "lease_until_ms", (json_int_t)w->lease_until);

    worker_view_free(v, w);
    /* What the worker last said stops it taking sandboxes; "" when healthy. */
    json_object_set_new(v, "healthy", json_boolean(w->problem[0] == '\0'));
    json_object_set_new(v, "problem", json_string(w->problem));
    /* [{template, runtime, size, ready}]: what it keeps started (decision 0082) */
    json_t *warm = json_loads(w->warm_json[0] ? w->warm_json : "[]", 0, NULL);
    json_object_set_new(v, "warm_pools", json_is_array(warm) ? warm : json_array());
    if (warm && !json_is_array(warm))
        json_decref(warm);
    return v;
}
