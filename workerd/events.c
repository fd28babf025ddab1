/* events.c: follows dockerd's event stream.
 *
 * GET /events filtered on our worker label, container "die" and "destroy".
 * The stream decides nothing itself: reconciliation (a listing before every
 * heartbeat) is the truth, because events are lost whenever the stream is
 * down. What it does: when the stream comes back after a break (dockerd
 * restarted), it tells the main thread to report every sandbox.
 *
 * A death of a sandbox we expect running is reported at once, on a short
 * request of its own beside the long-poll (deaths.c), and so is every death
 * found when the stream comes back after dockerd restarted. */
#include "worker.h"

#include "dataplane.h"
#include "egress_pool.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stream {
    struct worker *w;
    struct docker q;    /* queries while the stream's connection is busy */
    struct control ctl; /* death reports beside the long-poll */
    char line[16384];
    size_t len;
};

static void on_event(struct stream *s, const char *text)
{
    json_t *ev = json_loads(text, 0, NULL);
    json_t *attrs = json_object_get(json_object_get(ev, "Actor"), "Attributes");
    char buf[CTR_ID_MAX], wid[sizeof(s->w->id.worker_id)];
    const char *sbid;

    pthread_mutex_lock(&s->w->id_mu);
    snprintf(wid, sizeof(wid), "%s", s->w->id.worker_id);
    pthread_mutex_unlock(&s->w->id_mu);
    sbid = containers_sbid_of(attrs, json_string_value(json_object_get(attrs, "name")), wid, buf,
                              sizeof(buf));

    /* its address may go to another sandbox now: the data port must ask again */
    if (sbid)
        dataplane_forget(sbid);
    if (sbid && sbtable_expect_running(&s->w->table, sbid)) {
        log_sandbox("info", sbid, NULL, "container %s; reporting it",
                    json_string_value(json_object_get(ev, "Action")) ?: "event");
        deaths_report(s->w, &s->q, &s->ctl, sbid);
    }
    json_decref(ev);
}

/* Events arrive as JSON objects, one per line. */
static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct stream *s = ud;
    size_t n = size * nmemb;

    for (size_t i = 0; i < n; i++) {
        if (ptr[i] == '\n') {
            s->line[s->len] = '\0';
            on_event(s, s->line);
            s->len = 0;
        } else if (s->len + 1 < sizeof(s->line)) {
            s->line[s->len++] = ptr[i];
        }
    }
    return n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    struct stream *s = ud;

    (void)dt, (void)dn, (void)ut, (void)un;
    return *s->w->stop ? 1 : 0;
}

static void follow(struct docker *d, struct stream *s)
{
    char url[1024], *enc;

    pthread_mutex_lock(&s->w->id_mu);
    json_t *filters = json_pack("{s:[s], s:[s, s], s:[s+]}", "type", "container", "event", "die",
                                "destroy", "label", "corral.worker=", s->w->id.worker_id);
    pthread_mutex_unlock(&s->w->id_mu);
    enc = docker_filters(d, filters);
    if (!enc)
        return;
    snprintf(url, sizeof(url), "http://docker/v1.41/events?filters=%s", enc);
    curl_free(enc);
    curl_easy_reset(d->curl);
    curl_easy_setopt(d->curl, CURLOPT_UNIX_SOCKET_PATH, d->sock);
    curl_easy_setopt(d->curl, CURLOPT_URL, url);
    curl_easy_setopt(d->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(d->curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(d->curl, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(d->curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(d->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(d->curl, CURLOPT_XFERINFODATA, s);
    s->len = 0;
    curl_easy_perform(d->curl); /* returns when the stream breaks or we stop */
}

static void *events_main(void *arg)
{
    struct worker *w = arg;
    struct docker d = {0};
    struct stream *s = calloc(1, sizeof(*s));
    char err[256];
    int broken = 0;

    if (!s || docker_init(&d, w->conf->docker_socket) != 0 ||
        docker_init(&s->q, w->conf->docker_socket) != 0 || control_init(&s->ctl, w->conf) != 0) {
        log_err("events thread: out of memory; deaths are found by polling only");
        free(s);
        return NULL;
    }
    s->w = w;
    while (!*w->stop) {
        if (docker_ping(&d, err, sizeof(err)) != 0) {
            broken = 1; /* asked often: deaths are reported as soon as it answers */
            sleep_unless_stopped(200, w->stop);
            continue;
        }
        if (broken) {
            log_info("dockerd answers again; reporting deaths and checking the ready proxies");
            atomic_store(&w->docker_back, 1);
            deaths_report(w, &s->q, &s->ctl, NULL);
            egress_pool_recheck(&s->q);
        }
        follow(&d, s);
        broken = 1; /* events may have been lost while the stream was down */
        sleep_unless_stopped(200, w->stop);
    }
    docker_close(&d);
    docker_close(&s->q);
    control_close(&s->ctl);
    free(s);
    return NULL;
}

int events_start(struct worker *w, pthread_t *th)
{
    return pthread_create(th, NULL, events_main, w);
}
