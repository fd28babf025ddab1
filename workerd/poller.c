/* poller.c: the control channel's long-poll, on a thread of its own
 * (decision 0084).
 *
 * The main thread applies commands (a batch of creates holds it for
 * seconds) and reports on short heartbeats; this thread only waits for
 * commands, so one reaches the worker the moment the control plane queues
 * it. Before, one that came while a batch ran waited for the main thread's
 * next look, every 250 ms (50 ms p50 of a warm create's 111). What a poll
 * brings waits in the inbox, and whoever waits for it is woken: the idle
 * main thread (poller_wait) or a batch's wait (poller_wake_on).
 *
 * It acknowledges and tells nothing (acks and reports stay the main
 * thread's), so a poll it loses loses nothing: its commands stay pending and
 * come again. Its polls follow one another, so none is abandoned while it
 * could still take a command (decision 0016), but at a stop (they come again
 * at the restart's resume) or after a handshake, which bumps the control
 * plane's poll ticket: the old poll can take nothing more. */
#include "poller.h"

#include "worker.h"

#include "clock.h"
#include "log.h"

#include <string.h>

/* The main thread's idle wait looks at *stop this often (a signal does not
 * end a condition wait). */
#define STOP_LOOK_MS 200

static struct {
    struct worker *w;
    struct control ctl;
    pthread_t th;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t idle_cv;  /* the main thread's, idle */
    pthread_cond_t pause_cv; /* ours, between polls */
    json_t *inbox;
    atomic_int news;
    atomic_int kick; /* the poll in flight is dropped (control.cancel) */
    atomic_int quit;
    pthread_mutex_t *wake_mu;
    pthread_cond_t *wake_cv;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER,
       .idle_cv = PTHREAD_COND_INITIALIZER,
       .pause_cv = PTHREAD_COND_INITIALIZER};

/* Under P.mu: news noted, and everyone waiting for it woken. */
static void tell_locked(void)
{
    atomic_store(&P.news, 1);
    if (P.wake_mu) {
        pthread_mutex_lock(P.wake_mu);
        pthread_cond_signal(P.wake_cv);
        pthread_mutex_unlock(P.wake_mu);
    }
    pthread_cond_signal(&P.idle_cv);
}

static void deliver(json_t *cmds)
{
    if (json_array_size(cmds) == 0)
        return;
    pthread_mutex_lock(&P.mu);
    json_array_extend(P.inbox, cmds);
    tell_locked();
    pthread_mutex_unlock(&P.mu);
}

/* The identity as the main thread last enrolled it; its poll_ms. */
static long identity(struct worker_identity *id)
{
    long poll_ms;

    pthread_mutex_lock(&P.w->id_mu);
    *id = P.w->id;
    poll_ms = P.w->poll_ms;
    pthread_mutex_unlock(&P.w->id_mu);
    return poll_ms;
}

/* One long-poll; how long to wait before the next (0: at once). */
static long poll_once(struct backoff *b)
{
    json_t *body = json_pack("{s:[], s:[], s:b, s:b, s:b}", "acks", "sandboxes", "full", 0,
                             "resume", 0, "wait", 1),
           *ans = NULL;
    struct worker_identity id;
    long status = 0, poll_ms = identity(&id), retry;
    char err[512];
    int rc;

    if (!body)
        return backoff_next(b);
    rc = control_post(&P.ctl, "/v1/worker/heartbeat", body, &id, poll_ms + CONTROL_POLL_SLACK_MS,
                      &status, &ans, err, sizeof(err));
    explicit_bzero(&id, sizeof(id));
    json_decref(body);
    if (atomic_load(&P.kick)) { /* dropped on purpose */
        json_decref(ans);
        return 0;
    }
    if (rc != 0) {
        log_warn("long-poll: %s", err);
        return backoff_next(b);
    }
    if (status != 200) { /* 410 or 403: the main thread's heartbeat enrols again */
        log_warn("long-poll answered %ld", status);
        json_decref(ans);
        pthread_mutex_lock(&P.mu);
        tell_locked();
        pthread_mutex_unlock(&P.mu);
        return backoff_next(b);
    }
    backoff_reset(b);
    commands_arrived(json_object_get(ans, "commands"));
    deliver(json_object_get(ans, "commands"));
    /* The control plane holds few long-polls open; when full it asks us to wait. */
    retry = (long)json_integer_value(json_object_get(ans, "retry_after_ms"));
    json_decref(ans);
    return retry > 60000 ? 60000 : retry > 0 ? retry : 0;
}

/* Until ms passed, a kick or a stop. */
static void pause_for(long ms)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    clock_timespec_add_ms(&until, ms);
    pthread_mutex_lock(&P.mu);
    while (!atomic_load(&P.kick) && !atomic_load(&P.quit) &&
           pthread_cond_timedwait(&P.pause_cv, &P.mu, &until) == 0)
        ;
    pthread_mutex_unlock(&P.mu);
}

static void *poll_main(void *arg)
{
    struct backoff b;

    (void)arg;
    backoff_init(&b, 500, P.w->conf->backoff_max_ms);
    while (!atomic_load(&P.quit)) {
        long next;
        atomic_store(&P.kick, 0); /* before the identity is read: a later kick drops this poll */
        next = poll_once(&b);
        if (next > 0 && !atomic_load(&P.quit))
            pause_for(next);
    }
    return NULL;
}

int poller_start(struct worker *w)
{
    memset(&P.ctl, 0, sizeof(P.ctl));
    P.w = w;
    P.inbox = json_array();
    atomic_store(&P.quit, 0);
    atomic_store(&P.news, 0);
    if (!P.inbox || control_init(&P.ctl, w->conf) != 0) {
        json_decref(P.inbox);
        P.inbox = NULL;
        return -1;
    }
    P.ctl.cancel = &P.kick;
    P.started = pthread_create(&P.th, NULL, poll_main, NULL) == 0;
    if (!P.started) {
        control_close(&P.ctl);
        json_decref(P.inbox);
        P.inbox = NULL;
        return -1;
    }
    return 0;
}

void poller_stop(void)
{
    if (!P.started)
        return;
    pthread_mutex_lock(&P.mu);
    atomic_store(&P.quit, 1);
    atomic_store(&P.kick, 1);
    pthread_cond_signal(&P.pause_cv);
    pthread_mutex_unlock(&P.mu);
    pthread_join(P.th, NULL);
    P.started = 0;
    control_close(&P.ctl);
    json_decref(P.inbox); /* unacknowledged: they come again at the next start's resume */
    P.inbox = NULL;
}

int poller_running(void)
{
    return P.started;
}

void poller_kick(void)
{
    if (!P.started)
        return;
    pthread_mutex_lock(&P.mu);
    atomic_store(&P.kick, 1);
    pthread_cond_signal(&P.pause_cv);
    pthread_mutex_unlock(&P.mu);
}

int poller_has_news(void)
{
    return atomic_load(&P.news);
}

void poller_take(json_t *into)
{
    pthread_mutex_lock(&P.mu);
    if (P.inbox) {
        json_array_extend(into, P.inbox);
        json_array_clear(P.inbox);
    }
    atomic_store(&P.news, 0);
    pthread_mutex_unlock(&P.mu);
}

void poller_wait(long ms, volatile sig_atomic_t *stop)
{
    int64_t end = clock_now_ms() + ms;

    pthread_mutex_lock(&P.mu);
    while (!atomic_load(&P.news) && !*stop && clock_now_ms() < end) {
        struct timespec until;
        int64_t left = end - clock_now_ms();
        clock_gettime(CLOCK_REALTIME, &until);
        clock_timespec_add_ms(&until, left < STOP_LOOK_MS ? left : STOP_LOOK_MS);
        (void)pthread_cond_timedwait(&P.idle_cv, &P.mu, &until);
    }
    pthread_mutex_unlock(&P.mu);
}

void poller_wake_on(pthread_mutex_t *mu, pthread_cond_t *cv)
{
    pthread_mutex_lock(&P.mu);
    P.wake_mu = mu;
    P.wake_cv = cv;
    pthread_mutex_unlock(&P.mu);
}
