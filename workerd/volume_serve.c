/* volume_serve.c: see volume_serve.h. Blocking I/O with timeouts, on a
 * thread: files are read and written here, never on the data port's event
 * loop. Every answer ends the connection (Connection: close); corral-api
 * opens one per request. */
#include "volume_serve.h"

#include "http_status.h"
#include "log.h"
#include "volume_files.h"
#include "volume_names.h"
#include "volume_req.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define IO_TIMEOUT_S 60        /* no byte either way for this long: given up */
#define META_BODY_MAX 4096     /* PATCH's {uid, gid, mode} */
#define LINGER_BYTES (1 << 20) /* drained after an early answer, so it is read */

static atomic_int serving;

struct job {
    int fd;
    char *in;
    size_t in_len, head_len, body_off; /* body_off: body bytes of in already used */
    long long cl;                      /* Content-Length, 0 none */
    int n_cl, n_te;
    char volume[DATAPORT_ID_MAX + 1], ws[DATAPORT_ID_MAX + 1];
    volume_root_fn root;
    void *ud;
};

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void send_head(struct job *j, int code, const char *type, long long length)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\n%s%s%sContent-Length: %lld\r\nConnection: close\r\n\r\n",
                     code, http_status_text(code), type ? "Content-Type: " : "", type ? type : "",
                     type ? "\r\n" : "", length);

    send_all(j->fd, head, (size_t)n);
}

static void answer_error(struct job *j, int code, const char *why)
{
    size_t n = 0;
    char *out = dataport_error_response(code, why, &n);

    if (code >= 500)
        log_about("warn", &(struct log_about){.workspace = j->ws}, "volume %s: %d %s", j->volume,
                  code, why);
    if (out)
        send_all(j->fd, out, n);
    free(out);
}

static void answer_json(struct job *j, int code, json_t *o)
{
    char *body = json_dumps(o, JSON_COMPACT);

    json_decref(o);
    if (!body) {
        answer_error(j, 500, "out of memory");
        return;
    }
    send_head(j, code, "application/json", (long long)strlen(body));
    send_all(j->fd, body, strlen(body));
    free(body);
}

/* Up to n bytes of the body: first what came with the head, then the socket.
 * >0, 0 at its end, -1 the connection failed or ended early. */
static ssize_t body_read(struct job *j, char *buf, size_t n)
{
    size_t have = j->in_len - j->head_len - j->body_off;
    ssize_t r;

    if (j->cl <= 0)
        return 0;
    if ((long long)n > j->cl)
        n = (size_t)j->cl;
    if (have > 0) {
        if (n > have)
            n = have;
        memcpy(buf, j->in + j->head_len + j->body_off, n);
        j->body_off += n;
        j->cl -= (long long)n;
        return (ssize_t)n;
    }
    do
        r = recv(j->fd, buf, n, 0);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return -1;
    j->cl -= r;
    return r;
}

static void do_write(struct job *j, int root, const struct volume_req *r, const struct vf_owner *o)
{
    struct vf_upload u;
    char why[300], *buf;
    json_t *out = NULL;
    ssize_t n = 1;
    int code = vf_upload_begin(root, r->path, &u, why, sizeof(why));

    if (code != 0) {
        answer_error(j, code, why);
        return;
    }
    if (!(buf = malloc(256 * 1024))) {
        vf_upload_abort(&u);
        answer_error(j, 500, "out of memory");
        return;
    }
    while ((n = body_read(j, buf, 256 * 1024)) > 0) {
        char *p = buf;
        ssize_t left = n, w = 0;
        while (left > 0 && (w = write(u.fd, p, (size_t)left)) > 0) {
            p += w;
            left -= w;
        }
        if (left > 0) {
            int err = w < 0 ? errno : EIO, full = err == ENOSPC || err == EDQUOT;
            snprintf(why, sizeof(why), "path: %s",
                     full ? "no space left for the volume" : strerror(err));
            code = full ? 507 : 500;
            n = -2;
            break;
        }
    }
    free(buf);
    if (n < 0) { /* -1: the body did not all come; no one to answer */
        vf_upload_abort(&u);
        if (n == -2)
            answer_error(j, code, why);
        return;
    }
    code = vf_upload_commit(&u, r->path, o, &out, why, sizeof(why));
    if (code != 0)
        answer_error(j, code, why);
    else
        answer_json(j, 201, out);
}

static void do_read(struct job *j, int root, const struct volume_req *r)
{
    char why[300];
    long long size = 0;
    off_t off = 0;
    int fd, code = vf_open_read(root, r->path, &fd, &size, why, sizeof(why));

    if (code != 0) {
        answer_error(j, code, why);
        return;
    }
    send_head(j, 200, "application/octet-stream", size);
    while (off < (off_t)size) {
        ssize_t s = sendfile(j->fd, fd, &off, (size_t)(size - off));
        if (s < 0 && errno == EINTR)
            continue;
        if (s <= 0)
            break; /* the file shrank, or the client went: the length tells */
    }
    close(fd);
}

static void do_set_meta(struct job *j, int root, struct volume_req *r)
{
    char body[META_BODY_MAX], why[300];
    size_t got = 0;
    json_t *out = NULL;
    ssize_t n;
    int code;

    while ((n = body_read(j, body + got, sizeof(body) - got)) > 0)
        got += (size_t)n;
    if (n < 0)
        return;
    if (volume_meta_parse(body, got, r, why, sizeof(why)) != 0) {
        answer_error(j, 400, why);
        return;
    }
    code = vf_set_meta(root, r->path,
                       &(struct vf_owner){.uid = r->uid, .gid = r->gid, .mode = r->mode}, &out, why,
                       sizeof(why));
    if (code != 0)
        answer_error(j, code, why);
    else
        answer_json(j, 200, out);
}

/* The checks before any file is touched: the operation, the volume the URL
 * names being the signed one, the body's framing and size. 0, or answered. */
static int check(struct job *j, struct volume_req *r)
{
    char why[300], signed_id[DATAPORT_ID_MAX + 1];
    int code = volume_req_parse(j->in, j->head_len, r, why, sizeof(why));

    snprintf(signed_id, sizeof(signed_id), "corral-%s", r->volume_id);
    if (code == 0 && strcmp(signed_id, j->volume) != 0) {
        code = 400;
        snprintf(why, sizeof(why), "the URL names another volume than X-Corral-Volume");
    } else if (code == 0 && (j->n_te > 0 || j->n_cl > 1 || j->cl < 0)) {
        code = j->n_te > 0 ? 411 : 400;
        snprintf(why, sizeof(why), "a body needs exactly one Content-Length (no chunks)");
    } else if (code == 0 && r->op == VOP_WRITE && j->cl > VOLUME_FILE_MAX) {
        code = 413;
        snprintf(why, sizeof(why), "a file of %lld bytes is over the limit of %lld", j->cl,
                 (long long)VOLUME_FILE_MAX);
    } else if (code == 0 && r->op == VOP_SET_META && (j->cl <= 0 || j->cl > META_BODY_MAX)) {
        code = 400;
        snprintf(why, sizeof(why), "a JSON body {uid, gid, mode} of at most %d bytes is needed",
                 META_BODY_MAX);
    } else if (code == 0 && r->op != VOP_WRITE && r->op != VOP_SET_META && j->cl > 0) {
        code = 400;
        snprintf(why, sizeof(why), "this operation takes no body");
    }
    if (code != 0)
        answer_error(j, code, why);
    return code;
}

static void serve(struct job *j)
{
    struct volume_req r;
    char why[300], dir[4096];
    json_t *out = NULL;
    int root = -1, code;
    struct vf_owner o;

    if (check(j, &r) != 0)
        return;
    o = (struct vf_owner){.uid = r.uid, .gid = r.gid, .mode = r.mode};
    if ((code = j->root(j->ud, j->volume, j->ws, dir, sizeof(dir), why, sizeof(why))) != 0) {
        answer_error(j, code, why);
        return;
    }
    if ((root = vf_open_root(dir)) < 0) {
        snprintf(why, sizeof(why), "the volume's directory: %s", strerror(errno));
        answer_error(j, 503, why);
        return;
    }
    switch (r.op) {
    case VOP_STAT:
        code = vf_stat(root, r.path, &out, why, sizeof(why));
        break;
    case VOP_LIST:
        code = vf_list(root, r.path, r.depth, &out, why, sizeof(why));
        break;
    case VOP_MKDIR:
        code = vf_mkdir(root, r.path, &o, r.force, &out, why, sizeof(why));
        break;
    case VOP_REMOVE:
        code = vf_remove(root, r.path, why, sizeof(why));
        break;
    case VOP_WRITE:
        do_write(j, root, &r, &o);
        code = -1;
        break;
    case VOP_READ:
        do_read(j, root, &r);
        code = -1;
        break;
    case VOP_SET_META:
        do_set_meta(j, root, &r);
        code = -1;
        break;
    }
    close(root);
    if (code > 0)
        answer_error(j, code, why);
    else if (code == 0 && out)
        answer_json(j, r.op == VOP_MKDIR ? 201 : 200, out);
    else if (code == 0)
        send_head(j, 204, NULL, 0);
}

/* After the answer, what still comes is read and dropped for a moment, so
 * that closing does not reset the connection before corral-api read it. */
static void linger(int fd)
{
    struct timeval tv = {.tv_sec = 1};
    char sink[16384];
    size_t total = 0;
    ssize_t r;

    shutdown(fd, SHUT_WR);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    while (total < LINGER_BYTES && (r = recv(fd, sink, sizeof(sink), 0)) > 0)
        total += (size_t)r;
}

static void *run(void *arg)
{
    struct job *j = arg;
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    int flags = fcntl(j->fd, F_GETFL);

    if (flags >= 0)
        fcntl(j->fd, F_SETFL, flags & ~O_NONBLOCK);
    setsockopt(j->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(j->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    serve(j);
    linger(j->fd);
    close(j->fd);
    free(j->in);
    free(j);
    atomic_fetch_sub(&serving, 1);
    return NULL;
}

void volume_serve_start(int fd, const struct dataport_head *h, const char *in, size_t len,
                        volume_root_fn root, void *ud)
{
    struct job *j = calloc(1, sizeof(*j));
    pthread_attr_t attr;
    pthread_t t;
    size_t n = 0;
    char *busy;
    int started = -1;

    if (j && (j->in = malloc(len + 1))) {
        memcpy(j->in, in, len);
        j->in_len = len;
        j->head_len = h->len;
        j->fd = fd;
        j->cl = h->n_cl ? h->cl : 0;
        j->n_cl = h->n_cl;
        j->n_te = h->n_te;
        snprintf(j->volume, sizeof(j->volume), "%s", h->volume);
        snprintf(j->ws, sizeof(j->ws), "%s", h->workspace);
        j->root = root;
        j->ud = ud;
        if (atomic_fetch_add(&serving, 1) < VOLUME_SERVE_MAX && pthread_attr_init(&attr) == 0) {
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            started = pthread_create(&t, &attr, run, j);
            pthread_attr_destroy(&attr);
        }
        if (started != 0)
            atomic_fetch_sub(&serving, 1);
    }
    if (started == 0)
        return;
    /* One try, no waiting: the event loop must not block. */
    busy = dataport_error_response(503, "worker busy with volume files; retry shortly", &n);
    if (busy)
        (void)!send(fd, busy, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    free(busy);
    close(fd);
    if (j)
        free(j->in);
    free(j);
}
