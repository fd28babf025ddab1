/* corral-api: the FastCGI application. Parses its config, opens its socket,
 * runs `threads` handler threads, each with its own Redis connection. */
#include "handlers.h"
#include "log.h"
#include "respond.h"

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
        request_init(&req, &fcgi, t);
        router_dispatch(&req);
        if (!req.responded)
            respond_error(&req, 500, "internal error");
        FCGX_Finish_r(&fcgi);
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

int main(int argc, char **argv)
{
    static struct server srv;
    const char *conf_path = "/etc/corral/corral.conf", *listen = NULL;
    struct worker_thread *threads;
    pthread_t *tids;
    char err[512];

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
    if (FCGX_Init() != 0 || open_socket(&srv) != 0)
        return 1;
    listen_fd = srv.listen_fd;
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    threads = calloc((size_t)srv.conf.threads, sizeof(*threads));
    tids = calloc((size_t)srv.conf.threads, sizeof(*tids));
    if (!threads || !tids) {
        free(threads);
        free(tids);
        return 1;
    }
    for (long i = 0; i < srv.conf.threads; i++) {
        threads[i].srv = &srv;
        corral_conf_rconn(&srv.conf, &threads[i].rc);
        pthread_create(&tids[i], NULL, serve, &threads[i]);
    }
    log_info("listening on %s with %ld threads (%ld may long-poll)", srv.conf.listen,
             srv.conf.threads, srv.conf.longpoll_max);
    for (long i = 0; i < srv.conf.threads; i++)
        pthread_join(tids[i], NULL);
    close(srv.listen_fd);
    unlink(srv.conf.listen);
    free(threads);
    free(tids);
    log_info("stopped");
    return 0;
}
