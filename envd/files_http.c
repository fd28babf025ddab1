/*
 * Downloads and uploads stream: a download goes out with sendfile (or through
 * gzip when the client accepts it), an upload is written to disk as it
 * arrives, whether raw (application/octet-stream, maybe Content-Encoding:
 * gzip) or multipart with any number of files. File system calls run as the
 * requesting user (creds_enter): the kernel checks permissions and new files
 * belong to the user. Access: X-Access-Token or a signed URL (auth.c).
 */
#include "files_http.h"

#include "auth.h"
#include "connect_rpc.h"
#include "dirs_for_user.h"
#include "entry.h"
#include "envd.h"
#include "files_parse.h"
#include "gate.h"
#include "multipart.h"
#include "paths.h"

#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IO_CHUNK (128 * 1024)
#define MAX_UPLOAD_FILES 1000

struct file_target {
    struct envd_user user;
    char raw_path[4096]; /* the path query parameter as sent ("" when absent) */
    int has_path;
    char username[128];
};

/* Common start of both routes: authorization, user, optional path. 0 ok, -1 answered. */
static int file_request_prelude(struct http_req *r, struct file_target *t, const char *op)
{
    char msg[256];
    int has_user;

    t->has_path = http_query_param(r, "path", t->raw_path, sizeof(t->raw_path));
    has_user = http_query_param(r, "username", t->username, sizeof(t->username));
    if (t->has_path < 0 || has_user < 0) {
        http_send_error(r, 400, "query parameter too long");
        return -1;
    }
    if (t->has_path == 0)
        t->raw_path[0] = '\0';
    if (has_user == 0)
        t->username[0] = '\0';
    if (auth_check_file_access(r, t->raw_path, op, t->username, msg, sizeof(msg)) < 0) {
        http_send_error(r, 401, "%s", msg);
        return -1;
    }
    if (t->username[0] != '\0' ? users_lookup(t->username, &t->user) < 0
                               : users_default(&t->user) < 0) {
        http_send_error(r, 401, "error looking up user '%s': unknown user", t->username);
        return -1;
    }
    return 0;
}

static int errno_status(int err)
{
    switch (err) {
    case ENOENT:
        return 404;
    case EACCES:
    case EPERM:
    case EROFS:
        return 403;
    case ENOSPC:
    case EDQUOT:
        return 507;
    case EISDIR:
    case ENOTDIR:
    case ENAMETOOLONG:
        return 400;
    default:
        return 500;
    }
}

static int send_gzip(struct http_req *r, int fd)
{
    unsigned char *in = malloc(IO_CHUNK), *out = malloc(IO_CHUNK);
    z_stream zs;
    int flush = Z_NO_FLUSH, rc = 0;

    memset(&zs, 0, sizeof(zs));
    /* level 1: the point is fewer bytes on the wire, not the best ratio */
    if (in == NULL || out == NULL ||
        deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(in);
        free(out);
        return -1;
    }
    while (rc == 0 && flush != Z_FINISH) {
        ssize_t n = read(fd, in, IO_CHUNK);
        if (n < 0) {
            rc = -1;
            break;
        }
        flush = n == 0 ? Z_FINISH : Z_NO_FLUSH;
        zs.next_in = in;
        zs.avail_in = (uInt)n;
        do {
            zs.next_out = out;
            zs.avail_out = IO_CHUNK;
            deflate(&zs, flush);
            if (http_send_chunk(r, out, IO_CHUNK - zs.avail_out) < 0) {
                rc = -1;
                break;
            }
        } while (zs.avail_out == 0);
    }
    deflateEnd(&zs);
    free(in);
    free(out);
    return rc == 0 ? http_end_chunks(r) : -1;
}

static int send_plain(struct http_req *r, int fd, off_t size)
{
    off_t off = 0;

    while (off < size) {
        ssize_t n =
            sendfile(r->c->fd, fd, &off, (size_t)(size - off > (1 << 30) ? 1 << 30 : size - off));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1; /* the file shrank or the client left */
    }
    return 0;
}

void files_get(struct http_req *r)
{
    struct file_target t;
    char resolved[4096], path[4096], msg[512], deny[1024];
    struct stat st;
    int fd = -1, rc;

    if (file_request_prelude(r, &t, "read") < 0)
        return;
    if (path_resolve(t.raw_path, &t.user, resolved, sizeof(resolved), msg, sizeof(msg)) < 0) {
        http_send_error(r, 400, "%s", msg);
        return;
    }
    /* from here on, path is what the gate decided on */
    if (gate_file_decided(GATE_READ, resolved, 0, path, sizeof(path), deny, sizeof(deny)) < 0) {
        http_send_error(r, 403, "%s", deny);
        return;
    }
    if (creds_enter(&t.user) < 0) {
        http_send_error(r, 500, "cannot switch to user '%s'", t.user.name);
        return;
    }
    if (stat(path, &st) < 0) {
        rc = errno;
        creds_leave();
        if (rc == ENOENT)
            http_send_error(r, 404, "path '%s' does not exist", path);
        else
            http_send_error(r, errno_status(rc), "error checking if path exists '%s': %s", path,
                            strerror(rc));
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        creds_leave();
        http_send_error(r, 400, "path '%s' is a directory", path);
        return;
    }
    fd = gate_open(path, O_RDONLY, 0);
    rc = errno;
    creds_leave();
    if (fd < 0) {
        http_send_error(r, errno_status(rc), "error opening file '%s': %s", path, strerror(rc));
        return;
    }
    if (st.st_size > 0 && files_accepts_gzip(r))
        rc = http_send_head(r, 200, "application/octet-stream", -1,
                            "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n") < 0
                 ? -1
                 : send_gzip(r, fd);
    else
        rc = http_send_head(r, 200, "application/octet-stream", st.st_size,
                            "Vary: Accept-Encoding\r\n") < 0
                 ? -1
                 : send_plain(r, fd, st.st_size);
    if (rc < 0)
        r->keep_alive = 0; /* headers went out already: all we can do is cut the response */
    close(fd);
}

/* ---- uploads ---- */

/* The request body, gunzipped when Content-Encoding says gzip. */
struct body_src {
    struct http_req *r;
    int gzip;
    int zdone;
    z_stream zs;
    unsigned char in[IO_CHUNK];
};

static ssize_t body_src_read(void *ctx, void *buf, size_t n)
{
    struct body_src *s = ctx;

    if (!s->gzip)
        return http_body_read(s->r, buf, n);
    if (s->zdone)
        return 0;
    s->zs.next_out = buf;
    s->zs.avail_out = (uInt)n;
    while (s->zs.avail_out == n) {
        if (s->zs.avail_in == 0) {
            ssize_t got = http_body_read(s->r, s->in, sizeof(s->in));
            if (got <= 0)
                return -1; /* a gzip stream must end with its own trailer */
            s->zs.next_in = s->in;
            s->zs.avail_in = (uInt)got;
        }
        int zr = inflate(&s->zs, Z_NO_FLUSH);
        if (zr == Z_STREAM_END) {
            s->zdone = 1;
            break;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR)
            return -1;
    }
    return (ssize_t)(n - s->zs.avail_out);
}

struct upload {
    struct http_req *r;
    struct file_target *t;
    json_t *meta;
    json_t *results; /* [{name, type, path, metadata?}] */
    int status;      /* HTTP status of the failure */
    char msg[700];
};

static int upload_fail(struct upload *u, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int upload_fail(struct upload *u, int status, const char *fmt, ...)
{
    va_list ap;

    u->status = status;
    va_start(ap, fmt);
    vsnprintf(u->msg, sizeof(u->msg), fmt, ap);
    va_end(ap);
    return -1;
}

/* mkdir -p of an upload's parents as the user; where the user may not create
 * one (EACCES), root creates the missing ones and gives them to the user, as
 * E2B's envd does (decision 0039). The file itself is still written as the user. */
static int ensure_parents(struct upload *u, const char *parent, char *msg, size_t msgsz)
{
    const struct envd_user *user = &u->t->user;
    int rc;

    if (path_ensure_dirs(parent, msg, msgsz) == 0)
        return 0;
    if (errno != EACCES || user->uid == 0)
        return -1;
    creds_leave();
    rc = dirs_create_for_user(parent, user, msg, msgsz);
    int err = errno;
    if (creds_enter(user) < 0) {
        snprintf(msg, msgsz, "cannot switch back to user '%s'", user->name);
        errno = EPERM;
        return -1;
    }
    errno = err;
    return rc;
}

/* Writes one file from read_fn, as the user. */
static int write_file(struct upload *u, const char *path, mp_source_fn read_fn, void *ctx)
{
    char parent[4096], msg[600];
    struct stat st;
    int fd;
    ssize_t n;
    char *buf;

    snprintf(parent, sizeof(parent), "%s", path);
    *strrchr(parent, '/') = '\0';
    if (parent[0] != '\0' && ensure_parents(u, parent, msg, sizeof(msg)) < 0)
        return upload_fail(u, errno == ENOTDIR ? 400 : errno_status(errno),
                           "error ensuring directories: %s", msg);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return upload_fail(u, 400, "path is a directory: %s", path);
    fd = gate_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        return upload_fail(u, errno_status(errno), "error opening file %s: %s", path,
                           strerror(errno));
    buf = malloc(IO_CHUNK);
    if (buf == NULL) {
        close(fd);
        return upload_fail(u, 500, "out of memory");
    }
    while ((n = read_fn(ctx, buf, IO_CHUNK)) > 0) {
        for (ssize_t w = 0; w < n;) {
            ssize_t k = write(fd, buf + w, (size_t)(n - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0) {
                int err = errno;
                close(fd);
                free(buf);
                if (err == ENOSPC || err == EDQUOT)
                    return upload_fail(u, 507, "not enough disk space available");
                return upload_fail(u, 500, "error writing file %s: %s", path, strerror(err));
            }
            w += k;
        }
    }
    free(buf);
    if (close(fd) < 0 || n < 0)
        return upload_fail(u, n < 0 ? 400 : 500, "error receiving file %s", path);
    if (entry_set_metadata(path, u->meta) < 0)
        return upload_fail(u, 500, "error storing metadata on %s: %s", path, strerror(errno));
    return 0;
}

static void add_result(struct upload *u, const char *path)
{
    json_t *o = json_pack("{s:o,s:s,s:o}", "name", json_str_lossy(path_base(path)), "type", "file",
                          "path", json_str_lossy(path));

    if (json_object_size(u->meta) > 0)
        json_object_set(o, "metadata", u->meta);
    json_array_append_new(u->results, o);
}

/* out: where the file goes, as the gate decided on it (canonical) when the gate is on. */
static int resolve_target(struct upload *u, const char *client_path, char *out, size_t outsz)
{
    char msg[512], deny[sizeof(u->msg)], resolved[4096];
    size_t i;
    json_t *prev;

    if (path_resolve(client_path, &u->t->user, resolved, sizeof(resolved), msg, sizeof(msg)) < 0)
        return upload_fail(u, 400, "error resolving path: %s", msg);
    if (gate_file_decided(GATE_WRITE, resolved, 0, out, outsz, deny, sizeof(deny)) < 0)
        return upload_fail(u, 403, "%s", deny);
    json_array_foreach(u->results, i, prev)
    {
        if (strcmp(json_string_value(json_object_get(prev, "path")), out) == 0)
            return upload_fail(
                u, 400,
                "you cannot upload multiple files to the same path '%s' in one upload request",
                out);
    }
    return 0;
}

static int upload_raw(struct upload *u, struct body_src *src)
{
    char path[4096];

    if (!u->t->has_path)
        return upload_fail(u, 400, "path query parameter is required for raw body upload");
    if (resolve_target(u, u->t->raw_path, path, sizeof(path)) < 0 ||
        write_file(u, path, body_src_read, src) < 0)
        return -1;
    add_result(u, path);
    return 0;
}

static ssize_t part_read(void *ctx, void *buf, size_t n)
{
    return multipart_read(ctx, buf, n);
}

static int upload_multipart(struct upload *u, struct body_src *src, const char *ctype)
{
    struct multipart *mp = malloc(sizeof(*mp));
    char name[128], filename[4096], path[4096];
    int rc;

    if (mp == NULL)
        return upload_fail(u, 500, "out of memory");
    if (multipart_init(mp, ctype, body_src_read, src) < 0) {
        free(mp);
        return upload_fail(u, 400, "multipart body without a boundary");
    }
    while ((rc = multipart_next(mp, name, sizeof(name), filename, sizeof(filename))) == 1) {
        if (strcmp(name, "file") != 0)
            continue;
        if (json_array_size(u->results) >= MAX_UPLOAD_FILES)
            rc = upload_fail(u, 400, "too many files in one upload");
        else if (resolve_target(u, u->t->has_path ? u->t->raw_path : filename, path, sizeof(path)) <
                     0 ||
                 write_file(u, path, part_read, mp) < 0)
            rc = -1;
        if (rc < 0) {
            free(mp);
            return -1;
        }
        add_result(u, path);
    }
    free(mp);
    if (rc < 0)
        return upload_fail(u, 400, "error reading multipart form");
    return 0;
}

static void upload_answer(struct upload *u, int rc)
{
    char *s;

    if (rc < 0) {
        u->r->keep_alive = 0; /* the rest of the body was not read */
        http_send_error(u->r, u->status, "%s", u->msg);
        return;
    }
    s = json_dumps(u->results, JSON_COMPACT);
    if (s == NULL) {
        http_send_error(u->r, 500, "cannot encode the response");
        return;
    }
    http_send_body(u->r, 200, "application/json", s, strlen(s));
    free(s);
}

void files_post(struct http_req *r)
{
    struct file_target t;
    struct upload u = {.r = r, .t = &t};
    struct body_src *src;
    const char *ctype = http_header(r, "Content-Type");
    const char *cenc = http_header(r, "Content-Encoding");
    int rc;

    if (file_request_prelude(r, &t, "write") < 0)
        return;
    u.meta = files_metadata_from_headers(r, u.msg, sizeof(u.msg));
    if (u.meta == NULL) {
        http_send_error(r, 400, "%s", u.msg);
        return;
    }
    src = calloc(1, sizeof(*src));
    u.results = json_array();
    if (src == NULL || u.results == NULL) {
        http_send_error(r, 500, "out of memory");
        goto out;
    }
    src->r = r;
    if (cenc != NULL && strcasecmp(cenc, "gzip") == 0) {
        src->gzip = 1;
        if (inflateInit2(&src->zs, 15 + 16) != Z_OK) {
            http_send_error(r, 500, "cannot start gzip decoding");
            goto out;
        }
    } else if (cenc != NULL && strcasecmp(cenc, "identity") != 0) {
        http_send_error(r, 400, "unsupported Content-Encoding %s", cenc);
        goto out;
    }
    if (creds_enter(&t.user) < 0) {
        http_send_error(r, 500, "cannot switch to user '%s'", t.user.name);
        goto out;
    }
    if (ctype != NULL && strncasecmp(ctype, "application/octet-stream", 24) == 0)
        rc = upload_raw(&u, src);
    else if (ctype != NULL && strncasecmp(ctype, "multipart/", 10) == 0)
        rc = upload_multipart(&u, src, ctype);
    else
        rc = upload_fail(&u, 400,
                         "unsupported content type: %s, expected multipart/form-data or "
                         "application/octet-stream",
                         ctype ? ctype : "(none)");
    creds_leave();
    upload_answer(&u, rc);
out:
    if (src != NULL && src->gzip)
        inflateEnd(&src->zs);
    free(src);
    json_decref(u.meta);
    json_decref(u.results);
}
