/* corral-api: the FastCGI application. Parses its config, opens its socket,
 * runs `threads` handler threads, each with its own Redis connection. */
#include "clock.h"
#include "handlers.h"
#include "log.h"
#include "respond.h"
#include "stop_signals.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;
static int listen_fd = -1;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
    /* Wakes every thread blocked in accept(); they see `stopping` and return. */
    if (listen_fd >= 0)
        shutdown(listen_fd, SHUT_RDWR);
}

static void *serve(void *arg)
{
    struct worker_thread *t = arg;
    FCGX_Request fcgi;

    FCGX_InitRequest(&fcgi, t->srv->listen_fd, 0);
    while (!stopping && FCGX_Accept_r(&fcgi) == 0) {
        struct request req;
        int64_t started = clock_now_ms();
        request_init(&req, &fcgi, t);
        log_ctx_set(LOG_REQUEST_ID, req.request_id);
        router_dispatch(&req);
        if (!req.responded)
            respond_error(&req, 500, "internal error");
        /* Before Finish: req's method points into the request's params. */
        request_log(&req, (long)(clock_now_ms() - started));
        FCGX_Finish_r(&fcgi);
        log_ctx_clear();
    }
    FCGX_Free(&fcgi, 1);
    rconn_close(&t->rc);
    return NULL;
}

static int parse_args(int argc, char **argv, const char **conf, const char **listen)
{
    int opt;

    while ((opt = getopt(argc, argv, "c:l:")) != -1) {
        if (opt == 'c')
            *conf = optarg;
        else if (opt == 'l')
            *listen = optarg;
        else
            return -1;
    }
    return 0;
}

static int open_socket(struct server *srv)
{
    unlink(srv->conf.listen);
    srv->listen_fd = FCGX_OpenSocket(srv->conf.listen, 1024);
    if (srv->listen_fd < 0) {
        log_err("cannot listen on %s", srv->conf.listen);
        return -1;
    }
    /* nginx runs as another user in corral-api's group (corral.sysusers), so
     * the socket is the group's, 0660: no other local user may talk to it. */
    if (chmod(srv->conf.listen, 0660) != 0) {
        log_err("cannot chmod %s: %s", srv->conf.listen, strerror(errno));
        return -1;
    }
    return 0;
}

/* Starts conf.threads handler threads and waits for them all. A thread that
 * cannot start stops the ones that did, and corral-api exits 1: serving with
 * fewer threads than configured would starve long-polls with nothing logged
 * to say why. 0, or 1. */
static int run_threads(struct server *srv)
{
    long n = srv->conf.threads, started = 0;
    struct worker_thread *threads = calloc((size_t)n, sizeof(*threads));
    pthread_t *tids = calloc((size_t)n, sizeof(*tids));
    int err = threads && tids ? 0 : ENOMEM;

    for (; !err && started < n; started++) {
        threads[started].srv = srv;
        corral_conf_rconn(&srv->conf, &threads[started].rc);
        if ((err = pthread_create(&tids[started], NULL, serve, &threads[started])) != 0)
            break;
    }
    if (err) {
        log_err("cannot start handler thread %ld of %ld: %s", started + 1, n, strerror(err));
        on_signal(SIGTERM); /* the threads that did start return */
    } else {
        log_info("listening on %s with %ld threads (%ld may long-poll)", srv->conf.listen, n,
                 srv->conf.longpoll_max);
    }
    for (long i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(threads);
    free(tids);
    return err ? 1 : 0;
}

int main(int argc, char **argv)
{
    static struct server srv;
    const char *conf_path = "/etc/corral/corral.conf", *listen = NULL;
    char err[512];
    int rc;

    log_set_name("corral-api");
    if (parse_args(argc, argv, &conf_path, &listen) != 0) {
        fprintf(stderr, "usage: corral-api [-c corral.conf] [-l socket]\n");
        return 2;
    }
    if (corral_conf_load(conf_path, &srv.conf, err, sizeof(err)) != 0) {
        log_err("config: %s", err);
        return 1;
    }
    if (listen)
        snprintf(srv.conf.listen, sizeof(srv.conf.listen), "%s", listen);
    sched_conf_init(&srv.sched, &srv.conf);
    /* Before any thread: volume_relay.c's transfers need it, and it is not
     * thread-safe. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        log_err("curl_global_init failed");
        return 1;
    }
    if (FCGX_Init() != 0 || open_socket(&srv) != 0)
        return 1;
    listen_fd = srv.listen_fd;
    /* SA_RESTART: the thread the signal lands on finishes its request (a
     * Redis read is not cut short); shutdown() in on_signal wakes the rest. */
    if (stop_signals_install(on_signal, 1) != 0) {
        log_err("sigaction: %s", strerror(errno));
        return 1;
    }
    rc = run_threads(&srv);
    close(srv.listen_fd);
    unlink(srv.conf.listen);
    log_info("stopped");
    return rc;
}
