/* tunnel_client.c: the tunnel thread of a worker behind NAT (decision 0087).
 *
 * With `tunnel = on` nothing connects to this host: the data port listens on
 * a unix socket only, and this thread keeps one connection out to the
 * control plane's tunnel route, reconnecting with the capped backoff and
 * jitter the control channel uses. The gateway opens an HTTP/2 stream on it
 * for each data-plane connection; each is joined to a new connection to the
 * data port, which checks the gateway's signature and the tokens exactly as
 * it does for a direct connection. The far end opens streams; this end
 * never does (h2bridge's accepter role), so a compromised worker has no way
 * to open a connection towards the gateway host. */
#include "tunnel_client.h"

#include "clock.h"
#include "h2bridge.h"
#include "log.h"
#include "tunnel_dial.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct tunnel_thread {
    struct worker *w;
};

/* Each stream: a connection of its own to the data port's unix socket. */
static int to_dataport(void *ctx, const char *authority)
{
    const char *path = (const char *)ctx + strlen("unix:");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd;

    (void)authority; /* every stream goes to the data port, whatever it names */
    if (strlen(path) >= sizeof(a.sun_path))
        return -1;
    memcpy(a.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        log_warn("tunnel: the data port refused a stream: %s", strerror(errno));
        close(fd);
        fd = -1;
    }
    return fd;
}

static void identity(struct worker *w, struct worker_identity *id)
{
    pthread_mutex_lock(&w->id_mu);
    *id = w->id;
    pthread_mutex_unlock(&w->id_mu);
}

/* One tunnel, from the dial to its end. 1 it was up (the backoff restarts),
 * 0 it never came up. */
static int one_tunnel(struct worker *w, const struct worker_identity *id)
{
    struct tunnel_conn t;
    struct h2b_io io;
    struct h2b *b;
    long status;
    char why[256];
    int rc;

    if (tunnel_dial(w->conf, id, &t, &status, why, sizeof(why)) != 0) {
        log_warn("tunnel: not up: %s", why);
        return 0;
    }
    tunnel_io(&t, &io);
    b = h2b_new(H2B_ACCEPTER, &io, to_dataport, (void *)w->conf->data_addr);
    if (!b) {
        tunnel_hangup(&t);
        return 0;
    }
    log_info("tunnel: up through %s", w->conf->control_url);
    rc = h2b_run(b, -1, NULL, -1, H2B_TUNNEL_PING_MS, H2B_TUNNEL_DEAD_MS);
    log_warn("tunnel: %s; reconnecting", rc == 0 ? "closed by the gateway" : "broken");
    h2b_free(b);
    tunnel_hangup(&t);
    return 1;
}

static void *tunnel_main(void *arg)
{
    struct tunnel_thread *t = arg;
    struct worker *w = t->w;
    struct backoff bo;

    backoff_init(&bo, 500, w->conf->backoff_max_ms);
    while (!*w->stop) {
        struct worker_identity id;

        identity(w, &id);
        if (id.worker_id[0] && one_tunnel(w, &id))
            backoff_reset(&bo);
        explicit_bzero(&id, sizeof(id));
        sleep_unless_stopped(backoff_next(&bo), w->stop);
    }
    return NULL;
}

int tunnel_client_start(struct worker *w)
{
    static struct tunnel_thread t;
    pthread_t th;

    t.w = w;
    if (pthread_create(&th, NULL, tunnel_main, &t) != 0)
        return -1;
    pthread_detach(th);
    return 0;
}
