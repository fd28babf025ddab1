#include "egress_resolver.h"

#include "control.h"
#include "egress_pool.h"
#include "log.h"
#include "worker.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define RESOLVERS_MAX 512
#define LINE_MAX_BYTES (64 * 1024)
#define IO_TIMEOUT_S 5
#define RESOLVE_TIMEOUT_MS 5000L

struct entry {
    char sbid[64];
    int fd;
};

static struct {
    pthread_mutex_t mu;
    struct entry e[RESOLVERS_MAX];
    int n, wake[2];
    struct worker *w;
} rs = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = {-1, -1}};

static void poke(void)
{
    if (rs.wake[1] >= 0 && write(rs.wake[1], "x", 1) < 0 && errno != EAGAIN)
        log_warn("egress resolver: wake: %s", strerror(errno));
}

/* 1 when sbid's socket is listened on already (a config rewritten). */
static int listening(const char *sbid)
{
    int yes = 0;

    pthread_mutex_lock(&rs.mu);
    for (int i = 0; i < rs.n && !yes; i++)
        yes = strcmp(rs.e[i].sbid, sbid) == 0;
    pthread_mutex_unlock(&rs.mu);
    return yes;
}

int egress_resolver_open(const char *dir, const char *sbid, char *err, size_t errlen)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd;

    if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/resolve.sock", dir) >=
        sizeof(a.sun_path)) {
        snprintf(err, errlen, "egress resolver: %.200s: path too long for a socket", dir);
        return -1;
    }
    if (listening(sbid) && access(a.sun_path, F_OK) == 0)
        return 0;
    egress_resolver_close(sbid);
    unlink(a.sun_path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    /* The proxy runs as nobody: the socket is reachable only through the
     * directory mounted into that one proxy. */
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || chmod(a.sun_path, 0666) != 0 ||
        listen(fd, 64) != 0) {
        snprintf(err, errlen, "egress resolver: %.200s: %s", a.sun_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    pthread_mutex_lock(&rs.mu);
    if (rs.n < RESOLVERS_MAX) {
        snprintf(rs.e[rs.n].sbid, sizeof(rs.e[rs.n].sbid), "%s", sbid);
        rs.e[rs.n++].fd = fd;
        fd = -1;
    }
    pthread_mutex_unlock(&rs.mu);
    if (fd >= 0) {
        close(fd);
        snprintf(err, errlen, "egress resolver: more than %d sandboxes", RESOLVERS_MAX);
        return -1;
    }
    poke();
    return 0;
}

void egress_resolver_close(const char *sbid)
{
    pthread_mutex_lock(&rs.mu);
    for (int i = 0; i < rs.n; i++)
        if (strcmp(rs.e[i].sbid, sbid) == 0) {
            close(rs.e[i].fd);
            rs.e[i--] = rs.e[--rs.n];
        }
    pthread_mutex_unlock(&rs.mu);
    poke();
}

/* One line from fd, NUL-terminated (malloc'd), or NULL. */
static char *read_line(int fd)
{
    char *buf = malloc(LINE_MAX_BYTES + 1);
    size_t n = 0;

    while (buf && n < LINE_MAX_BYTES) {
        ssize_t r = read(fd, buf + n, LINE_MAX_BYTES - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        if (memchr(buf + n - (size_t)r, '\n', (size_t)r)) {
            buf[n] = '\0';
            return buf;
        }
    }
    free(buf);
    return NULL;
}

/* The control plane's answer to one request of sbid's proxy, as the line to
 * send back (malloc'd). */
static char *resolve(struct control *ctl, const char *sbid, const json_t *req)
{
    struct worker_identity id;
    json_t *body, *ans = NULL, *out;
    long status = 0;
    char err[256], *line;

    /* A proxy's transform counts go to the audit; anything else is a question. */
    const char *path =
        json_object_get(req, "audit") ? "/v1/worker/egress-audit" : "/v1/worker/egress-resolve";

    body =
        json_object_get(req, "audit")
            ? json_pack("{s:s, s:O, s:O?}", "sandbox", sbid, "audit", json_object_get(req, "audit"),
                        "dropped", json_object_get(req, "dropped"))
            : json_pack("{s:s, s:O?, s:O?, s:O?}", "sandbox", sbid, "host",
                        json_object_get(req, "host"), "secrets", json_object_get(req, "secrets"),
                        "tokens", json_object_get(req, "tokens"));
    pthread_mutex_lock(&rs.w->id_mu);
    id = rs.w->id;
    pthread_mutex_unlock(&rs.w->id_mu);
    if (!body || control_post(ctl, path, body, &id, RESOLVE_TIMEOUT_MS, &status, &ans, err,
                              sizeof(err)) != 0)
        out = json_pack("{s:s}", "error", "the control plane is not reachable");
    else if (status == 200 && json_is_object(ans))
        out = json_incref(ans);
    else
        out = json_pack("{s:s}", "error",
                        json_string_value(json_object_get(ans, "message")) ?: "refused");
    explicit_bzero(&id, sizeof(id));
    json_decref(body);
    json_decref(ans);
    line = out ? json_dumps(out, JSON_COMPACT) : NULL;
    json_decref(out);
    return line;
}

struct conn {
    int fd;
    char sbid[64];
};

static void *serve(void *arg)
{
    struct conn *c = arg;
    struct timeval tv = {IO_TIMEOUT_S, 0};
    struct control ctl;
    char *line, *answer = NULL;
    json_t *req;

    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    line = read_line(c->fd);
    req = line ? json_loads(line, 0, NULL) : NULL;
    if (json_is_object(req) && control_init(&ctl, rs.w->conf) == 0) {
        answer = resolve(&ctl, c->sbid, req);
        control_close(&ctl);
    }
    if (answer) {
        size_t len = strlen(answer);
        if (write(c->fd, answer, len) != (ssize_t)len || write(c->fd, "\n", 1) != 1)
            log_warn("egress resolver: %s: the proxy left before its answer", c->sbid);
        explicit_bzero(answer, len);
    }
    free(answer);
    free(line);
    json_decref(req);
    close(c->fd);
    free(c);
    return NULL;
}

static void accept_one(int lfd, const char sbid[64])
{
    struct conn *c = malloc(sizeof(*c));
    pthread_t th;

    if (!c || (c->fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0) {
        free(c);
        return;
    }
    memcpy(c->sbid, sbid, sizeof(c->sbid));
    c->sbid[sizeof(c->sbid) - 1] = '\0';
    if (pthread_create(&th, NULL, serve, c) != 0) {
        close(c->fd);
        free(c);
        return;
    }
    pthread_detach(th);
}

static void *accept_loop(void *arg)
{
    static struct pollfd p[RESOLVERS_MAX + 1];
    static char ids[RESOLVERS_MAX][64];
    char drain[64];
    int n;

    (void)arg;
    for (;;) {
        pthread_mutex_lock(&rs.mu);
        n = rs.n;
        for (int i = 0; i < n; i++) {
            p[i] = (struct pollfd){.fd = rs.e[i].fd, .events = POLLIN};
            memcpy(ids[i], rs.e[i].sbid, sizeof(ids[i]));
        }
        pthread_mutex_unlock(&rs.mu);
        p[n] = (struct pollfd){.fd = rs.wake[0], .events = POLLIN};
        if (poll(p, (nfds_t)n + 1, -1) < 0 && errno != EINTR)
            return NULL;
        if (p[n].revents & POLLIN)
            while (read(rs.wake[0], drain, sizeof(drain)) > 0)
                ;
        /* A socket closed meanwhile fails accept: it is skipped. */
        for (int i = 0; i < n; i++)
            if (p[i].revents & POLLIN)
                accept_one(p[i].fd, ids[i]);
    }
}

/* Sockets again for the sandboxes a previous run left: their proxies ask. */
static void reopen(const char *root)
{
    DIR *d = opendir(root);
    struct dirent *de;
    char dir[4096], conf[4200], err[256];

    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.' ||
            strncmp(de->d_name, EGRESS_POOL_PREFIX, strlen(EGRESS_POOL_PREFIX)) == 0)
            continue;
        snprintf(dir, sizeof(dir), "%s/%s", root, de->d_name);
        snprintf(conf, sizeof(conf), "%s/config", dir);
        if (access(conf, F_OK) == 0 && egress_resolver_open(dir, de->d_name, err, sizeof(err)) != 0)
            log_warn("%s", err);
    }
    if (d)
        closedir(d);
}

int egress_resolver_start(struct worker *w, const char *root)
{
    pthread_t th;

    rs.w = w;
    if (pipe2(rs.wake, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    reopen(root);
    if (pthread_create(&th, NULL, accept_loop, NULL) != 0)
        return -1;
    pthread_detach(th);
    return 0;
}
