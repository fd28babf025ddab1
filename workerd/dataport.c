/*
 * dataport.c: the worker's data port (see dataport.h and docs/data-plane.md):
 * the listening socket, one event loop thread (epoll) for every connection,
 * the timers, and the resolver threads. A gateway connection's exchanges are
 * in dataport_conn.c, kept sandbox connections in dataport_pool.c, the pure
 * parts (heads, signatures, message ends) in dataport_head.c and
 * dataport_frame.c. Why one loop and not a thread per connection, and why
 * plain copies and not splice(2): decision 0050.
 *
 * Nothing in the loop blocks: finding a sandbox's address not yet cached asks
 * dockerd, which can take a while, so that happens on a short-lived thread of
 * its own (at most DATAPORT_MAX_RESOLVING sandboxes at once; requests for a
 * sandbox already being looked up wait on that lookup), whose answer comes
 * back through an eventfd.
 */
#include "dataport.h"

#include "clock.h"
#include "dataport_loop.h"
#include "fd_limit.h"
#include "log.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define LOOP_EVENTS 256
#define TIMER_MS 1000 /* how often deadlines are looked at */

/* The last accept failure, for the worker's health (health.c). */
static struct {
    pthread_mutex_t mu;
    int64_t when;
    char why[128];
} trouble = {.mu = PTHREAD_MUTEX_INITIALIZER};

int64_t dataport_accept_trouble(char *why, size_t len)
{
    int64_t when;

    pthread_mutex_lock(&trouble.mu);
    when = trouble.when;
    snprintf(why, len, "%s", trouble.why);
    pthread_mutex_unlock(&trouble.mu);
    return when;
}

void dp_note_trouble(int err)
{
    pthread_mutex_lock(&trouble.mu);
    trouble.when = clock_now_ms();
    snprintf(trouble.why, sizeof(trouble.why), "%s", strerror(err));
    pthread_mutex_unlock(&trouble.mu);
}

int dp_loop_watch(struct dp_loop *l, struct dp_ep *e)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = e};

    return epoll_ctl(l->ep, EPOLL_CTL_ADD, e->fd, &ev);
}

void dp_loop_bury(struct dp_loop *l, struct dp_ep *e)
{
    if (e->fd >= 0)   /* -1: handed off (a volume request), not ours to close */
        close(e->fd); /* out of epoll from the next wait on */
    e->fd = -1;
    e->kind = DP_DEAD;
    e->grave = l->graves;
    l->graves = e;
}

static void free_graves(struct dp_loop *l)
{
    while (l->graves) {
        struct dp_ep *e = l->graves;
        l->graves = e->grave;
        free(e); /* the struct it begins */
    }
}

void dp_loop_ready(struct dp_loop *l, struct dp_conn *c)
{
    if (c->ready)
        return;
    c->ready = 1;
    c->rprev = NULL;
    c->rnext = l->ready;
    if (l->ready)
        l->ready->rprev = c;
    l->ready = c;
}

void dp_loop_unready(struct dp_loop *l, struct dp_conn *c)
{
    if (!c->ready)
        return;
    if (c->rprev)
        c->rprev->rnext = c->rnext;
    else
        l->ready = c->rnext;
    if (c->rnext)
        c->rnext->rprev = c->rprev;
    c->ready = 0;
    c->rprev = c->rnext = NULL;
}

struct resolve_job {
    struct dp_loop *loop;
    struct dp_resolved *answer; /* allocated before the thread: it cannot fail to answer */
    char sbid[DATAPORT_ID_MAX + 1];
};

static void *resolve_main(void *arg)
{
    struct resolve_job *j = arg;
    struct dp_loop *l = j->loop;
    struct dp_resolved *r = j->answer;
    uint64_t one = 1;

    r->rc = l->hooks.resolve(l->hooks.ud, j->sbid, r->ip, sizeof(r->ip));
    pthread_mutex_lock(&l->mu);
    r->next = l->resolved;
    l->resolved = r;
    pthread_mutex_unlock(&l->mu);
    (void)!write(l->wake.fd, &one, sizeof(one));
    free(j);
    return NULL;
}

static int start_resolver(struct resolve_job *j)
{
    pthread_attr_t attr;
    pthread_t t;
    int ok;

    if (pthread_attr_init(&attr) != 0)
        return -1;
    ok = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
         pthread_attr_setstacksize(&attr, (size_t)256 * 1024) == 0 &&
         pthread_create(&t, &attr, resolve_main, j) == 0;
    pthread_attr_destroy(&attr);
    if (!ok)
        log_err("dataport: cannot start a resolver thread");
    return ok ? 0 : -1;
}

int dp_loop_resolve(struct dp_loop *l, struct dp_conn *c)
{
    struct dp_pending *p;
    struct resolve_job *j;
    struct dp_resolved *r;

    for (p = l->pending; p; p = p->next)
        if (strcmp(p->sbid, c->h.sandbox) == 0) {
            c->rwait = p->waiters;
            p->waiters = c;
            return 0;
        }
    if (l->npending >= DATAPORT_MAX_RESOLVING)
        return -1;
    p = calloc(1, sizeof(*p));
    j = calloc(1, sizeof(*j));
    r = calloc(1, sizeof(*r));
    if (p && j && r) {
        snprintf(p->sbid, sizeof(p->sbid), "%s", c->h.sandbox);
        snprintf(j->sbid, sizeof(j->sbid), "%s", c->h.sandbox);
        j->loop = l;
        j->answer = r;
        r->pending = p;
        if (start_resolver(j) == 0) {
            c->rwait = NULL;
            p->waiters = c;
            p->next = l->pending;
            l->pending = p;
            l->npending++;
            return 0;
        }
    }
    free(p);
    free(j);
    free(r);
    return -1;
}

/* The lookup is over: out of the list before anyone waiting goes on, since
 * going on may start another lookup. */
static struct dp_conn *unpend(struct dp_loop *l, struct dp_pending *p)
{
    struct dp_pending **at = &l->pending;
    struct dp_conn *waiters = p->waiters;

    while (*at && *at != p)
        at = &(*at)->next;
    if (*at)
        *at = p->next;
    l->npending--;
    free(p);
    return waiters;
}

/* The resolver threads' answers. */
static void take_resolved(struct dp_loop *l)
{
    struct dp_resolved *r, *next;
    uint64_t n;

    (void)!read(l->wake.fd, &n, sizeof(n));
    pthread_mutex_lock(&l->mu);
    r = l->resolved;
    l->resolved = NULL;
    pthread_mutex_unlock(&l->mu);
    for (; r; r = next) {
        struct dp_conn *w = unpend(l, r->pending), *wnext;

        next = r->next;
        for (; w; w = wnext) {
            wnext = w->rwait;
            w->rwait = NULL;
            conn_resolved(w, r->rc, r->ip);
        }
        free(r);
    }
}

static void accept_all(struct dp_loop *l)
{
    for (int i = 0; i < 64; i++) {
        int fd = accept4(l->listen.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), one = 1;
        struct dp_conn *c;

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                log_err("dataport: accept: %s", strerror(errno));
                dp_note_trouble(errno);
            }
            return;
        }
        if (l->nconns >= DATAPORT_MAX_CONNS) {
            conn_refuse(fd, 503, "worker data port busy; retry shortly");
            continue;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        c = conn_new(l, fd);
        if (!c) {
            close(fd);
            continue;
        }
        c->ep.can_read = 1; /* the gateway usually sends its head at once */
        conn_progress(c);
    }
}

static void on_event(struct dp_loop *l, struct epoll_event *ev)
{
    struct dp_ep *e = ev->data.ptr;
    uint32_t f = ev->events;

    if (e->kind == DP_DEAD)
        return;
    if (e->kind == DP_LISTEN) {
        accept_all(l);
        return;
    }
    if (e->kind == DP_WAKE) {
        take_resolved(l);
        return;
    }
    if (f & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        e->can_read = 1;
    if (f & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        e->hup = 1;
    if (f & (EPOLLOUT | EPOLLHUP | EPOLLERR))
        e->can_write = 1;
    if (e->kind == DP_CLIENT) {
        conn_progress((struct dp_conn *)e);
    } else {
        struct dp_up *u = (struct dp_up *)e;
        if (u->conn)
            conn_progress(u->conn);
        else if (f & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
            pool_drop(l, u); /* idle, and the sandbox closed it or spoke unasked */
    }
}

static void run_timers(struct dp_loop *l)
{
    struct dp_conn *c = l->conns, *next;

    for (; c; c = next) {
        next = c->next;
        conn_timeout(c);
    }
    pool_expire(l);
}

static void run_ready(struct dp_loop *l)
{
    while (l->ready) {
        struct dp_conn *c = l->ready;
        dp_loop_unready(l, c);
        conn_progress(c);
        if (c == l->ready)
            break; /* yielded again at once: its turn comes after the next wait */
    }
}

static void *loop_main(void *arg)
{
    struct dp_loop *l = arg;
    struct epoll_event evs[LOOP_EVENTS];
    int64_t next_timer = io_now_ms() + TIMER_MS;

    for (;;) {
        int n = epoll_wait(l->ep, evs, LOOP_EVENTS, l->ready ? 0 : TIMER_MS);

        l->now = io_now_ms();
        if (n < 0 && errno != EINTR) {
            log_err("dataport: epoll_wait: %s", strerror(errno));
            dp_note_trouble(errno);
            usleep(100000);
        }
        for (int i = 0; i < n; i++)
            on_event(l, &evs[i]);
        run_ready(l);
        if (l->now >= next_timer) {
            run_timers(l);
            next_timer = l->now + TIMER_MS;
        }
        free_graves(l);
    }
    return NULL;
}

/* Splits "host:port", "[v6]:port" or ":port". 0, or -1. */
static int split_addr(const char *addr, char *host, size_t hcap, const char **port)
{
    const char *colon;
    size_t n;

    if (addr[0] == '[') {
        const char *close_b = strchr(addr, ']');
        if (!close_b || close_b[1] != ':')
            return -1;
        n = (size_t)(close_b - addr - 1);
        if (n >= hcap)
            return -1;
        memcpy(host, addr + 1, n);
        host[n] = '\0';
        *port = close_b + 2;
        return 0;
    }
    colon = strrchr(addr, ':');
    if (!colon || (size_t)(colon - addr) >= hcap)
        return -1;
    n = (size_t)(colon - addr);
    memcpy(host, addr, n);
    host[n] = '\0';
    *port = colon + 1;
    return 0;
}

/* "unix:PATH": a tunnelled worker's data port (decision 0087), reached only
 * through its tunnel, so that nothing listens on TCP. Mode 0600: root (the
 * tunnel client, in this process) connects, no other user of the host. */
static int listen_unix(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd;
    mode_t old;

    if (strlen(path) >= sizeof(a.sun_path)) {
        log_err("dataport: %s: path too long for a unix socket", path);
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    unlink(path); /* a socket left by a killed workerd */
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    old = umask(0177);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4096) != 0) {
        log_err("dataport: cannot listen on %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    umask(old);
    return fd;
}

static int listen_on(const char *listen_addr)
{
    struct addrinfo hints = {0}, *ai = NULL;
    char host[128];
    const char *port;
    int fd, one = 1, rc;

    if (strncmp(listen_addr, "unix:", 5) == 0)
        return listen_unix(listen_addr + 5);
    if (split_addr(listen_addr, host, sizeof(host), &port) != 0 ||
        !dataport_all_digits(port, 1, 5)) {
        log_err("dataport: listen address \"%s\" is not host:port", listen_addr);
        return -1;
    }
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (rc != 0 || !ai) {
        log_err("dataport: %s: %s", listen_addr, gai_strerror(rc));
        return -1;
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 4096) != 0) {
        log_err("dataport: cannot listen on %s: %s", listen_addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

static struct dp_loop *loop_new(int lfd, const struct dataport_hooks *hooks)
{
    struct dp_loop *l = calloc(1, sizeof(*l));
    struct epoll_event ev = {.events = EPOLLIN};

    if (!l)
        return NULL;
    l->hooks = *hooks;
    l->listen.kind = DP_LISTEN;
    l->listen.fd = lfd;
    l->wake.kind = DP_WAKE;
    l->wake.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    l->ep = epoll_create1(EPOLL_CLOEXEC);
    l->scratch = malloc(DATAPORT_SCRATCH);
    pthread_mutex_init(&l->mu, NULL);
    if (l->wake.fd < 0 || l->ep < 0 || !l->scratch)
        goto fail;
    ev.data.ptr = &l->listen;
    if (epoll_ctl(l->ep, EPOLL_CTL_ADD, lfd, &ev) != 0)
        goto fail;
    ev.data.ptr = &l->wake;
    if (epoll_ctl(l->ep, EPOLL_CTL_ADD, l->wake.fd, &ev) != 0)
        goto fail;
    return l;
fail:
    log_err("dataport: cannot set up its event loop: %s", strerror(errno));
    if (l->wake.fd >= 0)
        close(l->wake.fd);
    if (l->ep >= 0)
        close(l->ep);
    free(l->scratch);
    free(l);
    return NULL;
}

int dataport_start(const char *listen_addr, const struct dataport_hooks *hooks)
{
    struct dp_loop *l;
    pthread_t t;
    int fd;

    if (!hooks || !hooks->worker_key || !hooks->resolve) {
        log_err("dataport: worker_key and resolve hooks are required");
        return -1;
    }
    fd_limit_raise("dataport"); /* two descriptors a connection */
    if ((fd = listen_on(listen_addr)) < 0)
        return -1;
    if (!(l = loop_new(fd, hooks))) {
        close(fd);
        return -1;
    }
    l->now = io_now_ms();
    if (pthread_create(&t, NULL, loop_main, l) != 0) {
        log_err("dataport: cannot start its event loop thread");
        close(fd);
        return -1;
    }
    pthread_detach(t);
    log_info("dataport: listening on %s", listen_addr);
    return 0;
}
