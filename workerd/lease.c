/* lease.c: the lease thread (decision 0076).
 *
 * The control plane takes a worker for dead when its lease (lease_ms) runs
 * out, and its sandboxes are then lost. The main thread renews it with every
 * heartbeat, but it also waits on dockerd: a snapshot, a slow kill, a batch
 * of creates on a loaded host held it past the lease, and a worker whose
 * sandboxes all ran well was declared dead (tests/workerd/pause, the e2b
 * scale-out check). So this thread renews the lease whenever the main thread
 * has not been heard for a third of it: a report_only heartbeat on a request
 * of its own, which renews and takes no command.
 *
 * A main thread stuck on one dockerd call must not be given creates it
 * cannot start: one call longer than STALL_LEASES leases (lease_blocked
 * brackets them) makes the renewal name it as the worker's problem, which
 * stops placement; the main thread's next heartbeat clears it. A batch's
 * wait is no such call: its creates run, and the main thread is heard. */
#include "worker.h"

#include "clock.h"
#include "log.h"

#include <string.h>

#define RENEW_TIMEOUT_MS 5000
#define STALL_LEASES 2

void lease_contact(struct worker *w)
{
    atomic_store(&w->contact_ms, clock_now_ms());
}

void lease_blocked(struct worker *w, int on)
{
    atomic_store(&w->blocked_ms, on ? clock_now_ms() : 0);
}

struct lease_thread {
    struct worker *w;
    struct control ctl;
    int stall_told; /* our last renewal named the stall */
};

/* The identity and lease, as the main thread last enrolled them. */
static long identity(struct worker *w, struct worker_identity *id)
{
    long lease;

    pthread_mutex_lock(&w->id_mu);
    *id = w->id;
    lease = w->lease_ms;
    pthread_mutex_unlock(&w->id_mu);
    return lease;
}

/* One renewal; the problem field only while stalled (stalled_ms >= 0), and
 * once more after (the worker's own health, so that nothing true is cleared). */
static void renew(struct lease_thread *t, const struct worker_identity *id, int64_t stalled_ms)
{
    json_t *body = json_pack("{s:[], s:[], s:b, s:b}", "acks", "sandboxes", "wait", 0,
                             "report_only", 1),
           *ans = NULL;
    char problem[256] = "", err[256];
    long status = 0;

    if (!body)
        return;
    if (stalled_ms >= 0) {
        snprintf(problem, sizeof(problem), "busy: one dockerd call has held it for %lld s",
                 (long long)(stalled_ms / 1000));
        json_object_set_new(body, "problem", json_string(problem));
    } else if (t->stall_told) {
        health_problem(t->w, problem, sizeof(problem));
        json_object_set_new(body, "problem", json_string(problem));
    }
    if (control_post(&t->ctl, "/v1/worker/heartbeat", body, id, RENEW_TIMEOUT_MS, &status, &ans,
                     err, sizeof(err)) != 0)
        log_warn("lease renewal: %s", err);
    else if (status != 200) /* 410 or 403: the main thread enrols again */
        log_warn("lease renewal answered %ld", status);
    else
        t->stall_told = stalled_ms >= 0;
    json_decref(body);
    json_decref(ans);
}

static void *lease_main(void *arg)
{
    struct lease_thread *t = arg;
    struct worker *w = t->w;
    int64_t renewed = 0;

    while (!*w->stop) {
        struct worker_identity id;
        long lease = identity(w, &id), third = lease > 0 ? lease / 3 : 5000;
        int64_t now = clock_now_ms(), heard = atomic_load(&w->contact_ms);
        int64_t blocked = atomic_load(&w->blocked_ms), last = heard > renewed ? heard : renewed;

        if (id.worker_id[0] && heard > 0 && now - last >= third) {
            int64_t held = blocked > 0 ? now - blocked : 0;
            renew(t, &id, held >= (int64_t)lease * STALL_LEASES ? held : -1);
            renewed = clock_now_ms();
        }
        explicit_bzero(&id, sizeof(id));
        sleep_unless_stopped(third / 4 > 0 ? third / 4 : 100, w->stop);
    }
    control_close(&t->ctl);
    return NULL;
}

int lease_start(struct worker *w, pthread_t *th)
{
    static struct lease_thread t;

    memset(&t, 0, sizeof(t));
    t.w = w;
    if (control_init(&t.ctl, w->conf) != 0)
        return -1;
    if (pthread_create(th, NULL, lease_main, &t) != 0) {
        control_close(&t.ctl);
        return -1;
    }
    return 0;
}
