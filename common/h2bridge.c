/* h2bridge.c: the HTTP/2 session of a tunnel and its streams (h2bridge.h). */
#include "h2bridge_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define STREAM_WINDOW (1 << 20)
#define CONN_WINDOW (32 << 20)
#define MAX_STREAMS 1024

struct h2b_stream *h2b_stream_find(struct h2b *b, int32_t id)
{
    for (struct h2b_stream *st = b->streams; st; st = st->next)
        if (st->id == id)
            return st;
    return NULL;
}

static struct h2b_stream *stream_new(struct h2b *b, int fd)
{
    struct h2b_stream *st = calloc(1, sizeof(*st));

    if (!st)
        return NULL;
    st->fd = fd;
    st->next = b->streams;
    b->streams = st;
    b->st.streams_opened++;
    b->st.streams_open++;
    return st;
}

void h2b_stream_drop(struct h2b *b, struct h2b_stream *st)
{
    if (st->in_len && st->id > 0) /* never written: the connection's window still counts it */
        nghttp2_session_consume(b->s, st->id, st->in_len);
    for (struct h2b_stream **p = &b->streams; *p; p = &(*p)->next)
        if (*p == st) {
            *p = st->next;
            break;
        }
    if (st->fd >= 0)
        close(st->fd);
    free(st->in);
    free(st);
    b->st.streams_open--;
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int h2b_stream_flush(struct h2b *b, struct h2b_stream *st)
{
    while (st->in_len > 0 && st->fd >= 0) {
        ssize_t n = send(st->fd, st->in, st->in_len, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (n <= 0) {
            if (!st->closed)
                nghttp2_submit_rst_stream(b->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL);
            nghttp2_session_consume(b->s, st->id, st->in_len); /* dropped: credited all the same */
            st->in_len = 0;
            return -1;
        }
        memmove(st->in, st->in + n, st->in_len - (size_t)n);
        st->in_len -= (size_t)n;
        b->st.bytes_in += n;
        /* the peer may send as much again: on the connection even once the
         * stream is closed (nghttp2 then credits the connection alone), or
         * a tunnel whose streams end with bytes waiting loses its window */
        nghttp2_session_consume(b->s, st->id, (size_t)n);
    }
    if (st->in_len == 0 && st->peer_eof && !st->wr_shut && st->fd >= 0) {
        shutdown(st->fd, SHUT_WR);
        st->wr_shut = 1;
    }
    return 0;
}

/* Our half of a stream: what fd has, as DATA, until its end. */
static ssize_t read_fd(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                       nghttp2_data_source *src, void *user)
{
    struct h2b_stream *st = src->ptr;
    struct h2b *b = user;
    ssize_t n = read(st->fd, buf, len);

    (void)s, (void)id;
    if (n > 0) {
        b->st.bytes_out += n;
        return n;
    }
    if (n == 0) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        return 0;
    }
    if (errno == EAGAIN || errno == EINTR) {
        st->deferred = 1;
        return NGHTTP2_ERR_DEFERRED;
    }
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream is reset */
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *user)
{
    struct h2b_stream *st = nghttp2_session_get_stream_user_data(s, id);

    (void)flags, (void)user;
    if (!st || st->fd < 0) {
        nghttp2_session_consume_connection(s, len);
        return 0;
    }
    if (st->in_len == 0) { /* straight to the socket: no copy, no wait for a turn */
        ssize_t n = send(st->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            ((struct h2b *)user)->st.bytes_in += n;
            nghttp2_session_consume(s, id, (size_t)n);
            data += n;
            len -= (size_t)n;
        }
        if (len == 0)
            return 0;
    }
    if (st->in_len + len > st->in_cap) {
        size_t cap = st->in_len + len > 65536 ? st->in_len + len : 65536;
        unsigned char *p = realloc(st->in, cap);
        if (!p)
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        st->in = p;
        st->in_cap = cap;
    }
    memcpy(st->in + st->in_len, data, len);
    st->in_len += len;
    return 0;
}

/* The peer's end of a stream, or its reset: an error closes fd at once, a
 * clean end lets what in holds be written first. */
static int on_close(nghttp2_session *s, int32_t id, uint32_t error, void *user)
{
    struct h2b *b = user;
    struct h2b_stream *st = nghttp2_session_get_stream_user_data(s, id);

    if (!st)
        return 0;
    st->closed = 1;
    if (error != NGHTTP2_NO_ERROR || st->in_len == 0)
        h2b_stream_drop(b, st);
    return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *user)
{
    struct h2b_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);

    (void)flags, (void)user;
    if (!st || f->hd.type != NGHTTP2_HEADERS)
        return 0;
    if (nlen == 7 && memcmp(name, ":method", 7) == 0)
        st->connect = vlen == 7 && memcmp(value, "CONNECT", 7) == 0;
    else if (nlen == 10 && memcmp(name, ":authority", 10) == 0 && vlen < sizeof(st->authority))
        memcpy(st->authority, value, vlen), st->authority[vlen] = '\0';
    else if (nlen == 7 && memcmp(name, ":status", 7) == 0 && vlen == 3)
        st->status = (value[0] - '0') * 100 + (value[1] - '0') * 10 + (value[2] - '0');
    return 0;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
    struct h2b *b = user;
    struct h2b_stream *st;

    if (b->role != H2B_ACCEPTER || f->hd.type != NGHTTP2_HEADERS ||
        f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    st = stream_new(b, -1);
    if (!st)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    st->id = f->hd.stream_id;
    nghttp2_session_set_stream_user_data(s, st->id, st);
    return 0;
}

/* Accepter: a whole request. A CONNECT gets its local connection and 200. */
static void answer_request(struct h2b *b, struct h2b_stream *st)
{
    static const nghttp2_nv ok[] = {
        {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE}};
    nghttp2_data_provider prd = {.source.ptr = st, .read_callback = read_fd};

    st->fd = st->connect && b->accept ? b->accept(b->actx, st->authority) : -1;
    if (st->fd < 0) {
        nghttp2_submit_rst_stream(b->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_REFUSED_STREAM);
        return;
    }
    set_nonblock(st->fd);
    if (nghttp2_submit_response(b->s, st->id, ok, 1, &prd) != 0)
        nghttp2_submit_rst_stream(b->s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
}

/* A GOAWAY either way that names an error makes the tunnel's end an error. */
static void note_goaway(struct h2b *b, const nghttp2_frame *f)
{
    if (f->hd.type == NGHTTP2_GOAWAY && f->goaway.error_code != NGHTTP2_NO_ERROR)
        b->broken = 1;
}

static int on_frame_sent(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
    (void)s;
    note_goaway(user, f);
    return 0;
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
    struct h2b *b = user;
    struct h2b_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);

    note_goaway(b, f);
    if (!st || (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA))
        return 0;
    if (f->hd.type == NGHTTP2_HEADERS && b->role == H2B_ACCEPTER &&
        f->headers.cat == NGHTTP2_HCAT_REQUEST)
        answer_request(b, st);
    else if (f->hd.type == NGHTTP2_HEADERS && b->role == H2B_OPENER && st->status != 200)
        nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL);
    if (f->hd.flags & NGHTTP2_FLAG_END_STREAM) {
        st->peer_eof = 1;
        h2b_stream_flush(b, st);
    }
    return 0;
}

static int settings(struct h2b *b)
{
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW},
        {b->role == H2B_OPENER ? NGHTTP2_SETTINGS_ENABLE_PUSH
                               : NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
         b->role == H2B_OPENER ? 0 : MAX_STREAMS},
    };

    if (nghttp2_submit_settings(b->s, NGHTTP2_FLAG_NONE, iv, 2) != 0)
        return -1;
    return nghttp2_session_set_local_window_size(b->s, NGHTTP2_FLAG_NONE, 0, CONN_WINDOW);
}

static int session_new(struct h2b *b)
{
    nghttp2_session_callbacks *cb;
    nghttp2_option *opt;
    int rc;

    if (nghttp2_session_callbacks_new(&cb) != 0)
        return -1;
    if (nghttp2_option_new(&opt) != 0) {
        nghttp2_session_callbacks_del(cb);
        return -1;
    }
    /* acknowledged only once written to the local socket (h2b_stream_flush) */
    nghttp2_option_set_no_auto_window_update(opt, 1);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_sent);
    rc = b->role == H2B_OPENER ? nghttp2_session_client_new2(&b->s, cb, b, opt)
                               : nghttp2_session_server_new2(&b->s, cb, b, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    return rc == 0 ? settings(b) : -1;
}

struct h2b *h2b_new(enum h2b_role role, const struct h2b_io *io, h2b_accept_fn accept,
                    void *accept_ctx)
{
    struct h2b *b = calloc(1, sizeof(*b));

    if (!b)
        return NULL;
    b->role = role;
    b->io = *io;
    b->accept = accept;
    b->actx = accept_ctx;
    if (session_new(b) != 0) {
        h2b_free(b);
        return NULL;
    }
    return b;
}

void h2b_free(struct h2b *b)
{
    if (!b)
        return;
    while (b->streams)
        h2b_stream_drop(b, b->streams);
    if (b->s)
        nghttp2_session_del(b->s);
    free(b);
}

int h2b_open(struct h2b *b, int fd, const char *authority)
{
    nghttp2_nv nv[] = {
        {(uint8_t *)":method", (uint8_t *)"CONNECT", 7, 7, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":authority", (uint8_t *)authority, 10, strlen(authority),
         NGHTTP2_NV_FLAG_NONE},
    };
    nghttp2_data_provider prd = {.read_callback = read_fd};
    struct h2b_stream *st = b->role == H2B_OPENER ? stream_new(b, fd) : NULL;

    if (!st) {
        close(fd);
        return -1;
    }
    set_nonblock(fd);
    prd.source.ptr = st;
    st->id = nghttp2_submit_request(b->s, NULL, nv, 2, &prd, st);
    if (st->id < 0) {
        h2b_stream_drop(b, st);
        return -1;
    }
    return 0;
}

void h2b_stats(const struct h2b *b, struct h2b_stats *out)
{
    *out = b->st;
}
