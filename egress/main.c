/* corral-egress: the egress proxy sidecar of one sandbox (README.md).
 * main.c: flags, the listening socket, the accept loop, clean exit on
 * SIGTERM/SIGINT, and the config file read again on SIGHUP. */
#include "conn.h"
#include "egress_conf.h"
#include "live.h"
#include "transform_audit.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#define USAGE                                                                                      \
    "usage: corral-egress [-listen ADDR:PORT] -sandbox ID -policy JSON\n"                          \
    "       corral-egress [-listen ADDR:PORT] -config-file PATH   (SIGHUP: read it again)\n"
#define CONFIG_POLL_NS (5 * 1000 * 1000)
#define CONFIG_WATCH_NS (100 * 1000 * 1000) /* how often a live update is looked for */
#define CONFIG_MAX (256 * 1024)

static volatile sig_atomic_t stopping, reloading;

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

static void on_hup(int sig)
{
    (void)sig;
    reloading = 1;
}

static int listen_on(const struct egress_conf *c)
{
    struct sockaddr_storage ss;
    socklen_t sl = ipaddr_to_sockaddr(&c->listen_addr, c->listen_port, &ss);
    int fd = socket(c->listen_addr.family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, CONN_MAX) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void reload(const struct egress_conf *c);

/* The signals are blocked everywhere (threads inherit the mask) and
 * unblocked only inside ppoll, so a signal can never slip in between the check
 * of `stopping` and the wait. */
/* The config file as last read: workerd replaces it by a rename (a new inode)
 * for a live network update. Looked at every CONFIG_WATCH_NS, so an update
 * takes effect without a signal through dockerd, which may be busy for a
 * second starting containers; SIGHUP still reloads at once. */
static struct stat seen;

static int config_replaced(const struct egress_conf *c)
{
    struct stat st;
    int changed;

    if (!c->config_file[0] || stat(c->config_file, &st) != 0)
        return 0;
    changed = st.st_ino != seen.st_ino || st.st_dev != seen.st_dev ||
              st.st_mtim.tv_sec != seen.st_mtim.tv_sec ||
              st.st_mtim.tv_nsec != seen.st_mtim.tv_nsec;
    seen = st;
    return changed;
}

static void accept_loop(int lfd, const struct egress_conf *c, const sigset_t *waitmask)
{
    struct timespec watch = {0, CONFIG_WATCH_NS};

    config_replaced(c);
    while (!stopping) {
        struct pollfd pfd = {.fd = lfd, .events = POLLIN};
        int replaced = config_replaced(c);
        if (reloading || replaced) {
            reloading = 0;
            reload(c);
        }
        if (ppoll(&pfd, 1, c->config_file[0] ? &watch : NULL, waitmask) <= 0)
            continue;
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            conn_start(fd, c, live_acquire());
        } else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            struct timespec pause = {0, 100 * 1000 * 1000}; /* let connections finish */
            ppoll(NULL, 0, &pause, waitmask);
        }
    }
}

static void signals_setup(sigset_t *waitmask)
{
    struct sigaction sa = {.sa_handler = on_stop}; /* no SA_RESTART: ppoll must return */
    struct sigaction hup = {.sa_handler = on_hup};
    sigset_t blocked;

    signal(SIGPIPE, SIG_IGN);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &hup, NULL);
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &blocked, waitmask);
    sigdelset(waitmask, SIGTERM);
    sigdelset(waitmask, SIGINT);
    sigdelset(waitmask, SIGHUP);
}

/* The whole file, or NULL while it is absent (workerd writes it by rename). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf;
    size_t n;

    if (!f)
        return NULL;
    buf = malloc(CONFIG_MAX + 1);
    n = buf ? fread(buf, 1, CONFIG_MAX, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* A pre-started proxy: waits (a few ms at a time) for its sandbox. Nothing
 * listens before: no connection is ever served without a policy. */
static int await_config(struct egress_conf *c, const sigset_t *waitmask, char *err, size_t errlen)
{
    struct timespec pause = {0, CONFIG_POLL_NS};
    char *text;
    int rc;

    while (!(text = slurp(c->config_file))) {
        if (stopping) {
            snprintf(err, errlen, "stopped before its sandbox came");
            return -1;
        }
        ppoll(NULL, 0, &pause, waitmask);
    }
    rc = egress_conf_take_file(c, text, err, errlen);
    free(text);
    return rc;
}

/* SIGHUP: the file again. The new configuration serves the connections
 * accepted from now on; open ones keep theirs (live.h). A file that does not
 * parse, or names another sandbox, changes nothing. Messages name keys and
 * files, never a value. */
static void reload(const struct egress_conf *c)
{
    struct live *cur = live_acquire();
    struct settings s;
    struct live *l = NULL;
    char err[256] = "no -config-file to read";
    char *text = c->config_file[0] ? slurp(c->config_file) : NULL;

    if (c->config_file[0] && !text)
        snprintf(err, sizeof(err), "cannot read the config file");
    if (text && settings_from_file(text, &s, err, sizeof(err)) == 0) {
        if (strcmp(s.sandbox, cur->s.sandbox) != 0) {
            snprintf(err, sizeof(err), "the config file names another sandbox");
            settings_free(&s);
        } else {
            l = live_make(&s, err, sizeof(err));
            if (!l)
                settings_free(&s);
        }
    }
    free(text);
    if (l) {
        live_publish(l);
        fprintf(stderr, "egress sandbox=%s reloaded\n", cur->s.sandbox);
    } else {
        fprintf(stderr, "egress sandbox=%s reload refused: %s\n", cur->s.sandbox, err);
    }
    live_release(cur);
}

static int first_live(struct egress_conf *conf, char *err, size_t errlen)
{
    struct live *l = live_make(&conf->settings, err, errlen);
    if (!l)
        return -1;
    live_publish(l);
    return 0;
}

int main(int argc, char **argv)
{
    struct egress_conf conf;
    char err[256], addr[IPADDR_STRLEN], sandbox[SANDBOX_ID_MAX + 1];
    sigset_t waitmask;

    if (egress_conf_parse(argc, argv, &conf, err, sizeof(err)) != 0) {
        fprintf(stderr, "corral-egress: %s\n" USAGE, err);
        return 2;
    }
    signals_setup(&waitmask);
    int rc = conf.config_file[0] ? await_config(&conf, &waitmask, err, sizeof(err)) : 0;
    memcpy(sandbox, conf.settings.sandbox, sizeof(sandbox)); /* first_live takes the settings */
    if (rc != 0 || first_live(&conf, err, sizeof(err)) != 0) {
        fprintf(stderr, "corral-egress: %s\n", err);
        egress_conf_free(&conf);
        return stopping ? 0 : 2;
    }
    reloading = 0; /* a SIGHUP before the first file changes nothing */
    ipaddr_format(&conf.listen_addr, addr, sizeof(addr));
    int lfd = listen_on(&conf);
    if (lfd < 0) {
        fprintf(stderr, "corral-egress: cannot listen on %s port %u: %s\n", addr, conf.listen_port,
                strerror(errno));
        return 1;
    }
    fprintf(stderr, "egress sandbox=%s listening on %s port %u\n", sandbox, addr, conf.listen_port);
    if (transform_audit_start() != 0)
        fprintf(stderr, "egress sandbox=%s audit: its thread did not start\n", sandbox);
    accept_loop(lfd, &conf, &waitmask);
    close(lfd);
    fprintf(stderr, "egress sandbox=%s stopping\n", sandbox);
    /* Relay threads still hold their configuration: the process exit ends
     * them, not a free. */
    return 0;
}
