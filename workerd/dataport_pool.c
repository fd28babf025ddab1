/* dataport_pool.c: connections to sandboxes kept between requests.
 *
 * A kept connection is reused only for the same sandbox, port and address
 * (its key), so a request never reaches a sandbox it was not signed for. A
 * few per key, a bound in all; unused for DATAPORT_POOL_IDLE it is closed,
 * and any event on an idle one (the sandbox closed it, or sent bytes nobody
 * asked for) closes it too. A list is enough: it is searched from the most
 * recently kept, which is where a busy sandbox's connections are.
 *
 * Kept only when known clean (decision 0066): a byte that arrives after a
 * response's end and before the next request is sent would be read as the
 * answer to that request, another client's. The event above does not catch
 * all of them: bytes that came while the exchange still ran (its response
 * complete, the gateway still reading) raise no event once idle, and an
 * event in the same batch as the next request may come after it. So the
 * socket itself is asked, without reading, when a connection is kept and
 * again when it is taken. */
#include "dataport_loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define POOL_MAX 1024
#define POOL_PER_KEY 32

void up_close(struct dp_loop *l, struct dp_up *u)
{
    dp_loop_bury(l, &u->ep);
}

/* 1 when nothing is waiting to be read on u: no byte, no end, no error. */
static int up_clean(const struct dp_up *u)
{
    char c;
    ssize_t r = recv(u->ep.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

    return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

static void unlink_idle(struct dp_loop *l, struct dp_up *u)
{
    if (u->prev)
        u->prev->next = u->next;
    else
        l->idle = u->next;
    if (u->next)
        u->next->prev = u->prev;
    u->prev = u->next = NULL;
    l->nidle--;
}

void pool_drop(struct dp_loop *l, struct dp_up *u)
{
    unlink_idle(l, u);
    up_close(l, u);
}

struct dp_up *pool_take(struct dp_loop *l, const char *key)
{
    struct dp_up *u = l->idle, *next;

    for (; u; u = next) {
        next = u->next;
        if (strcmp(u->key, key) != 0)
            continue;
        if (!up_clean(u)) { /* spoke unasked or closed, its event not seen yet */
            pool_drop(l, u);
            continue;
        }
        /* a close that crosses this reuse is retried (dataport_conn.c) */
        unlink_idle(l, u);
        u->reused = 1;
        return u;
    }
    return NULL;
}

void pool_put(struct dp_loop *l, struct dp_up *u)
{
    struct dp_up *p, *last = NULL, *oldest_same = NULL;
    int same = 0;

    u->conn = NULL;
    if (!up_clean(u)) { /* bytes after the response's end, or the sandbox closed */
        up_close(l, u);
        return;
    }
    /* fewer kept than one key may hold: no bound can be reached, no walk */
    for (p = l->nidle < POOL_PER_KEY ? NULL : l->idle; p; p = p->next) {
        last = p;
        if (strcmp(p->key, u->key) == 0) {
            same++;
            oldest_same = p;
        }
    }
    if (same >= POOL_PER_KEY)
        pool_drop(l, oldest_same);
    else if (l->nidle >= POOL_MAX && last)
        pool_drop(l, last);
    u->idle_until = l->now + DATAPORT_POOL_IDLE;
    u->prev = NULL;
    u->next = l->idle;
    if (l->idle)
        l->idle->prev = u;
    l->idle = u;
    l->nidle++;
}

void pool_expire(struct dp_loop *l)
{
    struct dp_up *u = l->idle, *next;

    for (; u; u = next) {
        next = u->next;
        if (u->idle_until <= l->now)
            pool_drop(l, u);
    }
}
