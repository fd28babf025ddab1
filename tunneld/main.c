/* corral-tunneld: holds worker tunnels on a gateway host (decision 0087;
 * README.md). nginx hands each authenticated upgrade to the unix socket
 * corral.conf's tunnel_listen names; each becomes a thread of its own. */
#include "corral_conf.h"
#include "fd_limit.h"
#include "holders.h"
#include "log.h"
#include "rconn.h"
#include "stop_signals.h"
#include "tunnel.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

/* Only nginx (the same user, or root) may hand over connections: 0660. */
static int listen_unix(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd;
    mode_t old;

    if (strlen(path) >= sizeof(a.sun_path))
        return -1;
    memcpy(a.sun_path, path, strlen(path) + 1);
    unlink(path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    old = umask(0117);
    if (fd >= 0 && (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 256) != 0)) {
        close(fd);
        fd = -1;
    }
    umask(old);
    return fd;
}

static void *serve_main(void *arg)
{
    tunnel_serve((int)(intptr_t)arg);
    return NULL;
}

static void accept_loop(int lfd)
{
    while (!stopping) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        pthread_t t;
        int fd;

        if (poll(&p, 1, 500) <= 0)
            continue;
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        if (pthread_create(&t, NULL, serve_main, (void *)(intptr_t)fd) != 0) {
            log_err("cannot start a tunnel's thread: %s", strerror(errno));
            close(fd);
            continue;
        }
        pthread_detach(t);
    }
}

/* tunnel_ports' one address as text, and its ports. */
static void ports_of(const struct corral_conf *c, char *ip, size_t cap, unsigned *lo, unsigned *hi)
{
    const struct data_addr_allow *a = &c->tunnel_allow;

    inet_ntop(a->addrs[0].family, a->addrs[0].addr, ip, (socklen_t)cap);
    *lo = a->addr_port[0];
    *hi = a->addr_port_hi[0];
}

/* -c corral.conf, then -l and -p over its tunnel_listen and tunnel_ports:
 * several gateway hosts' daemons on one machine (conf/gateway-hosts.sh),
 * each with its own socket and address. 0, or -1 having said why. */
static int load_conf(int argc, char **argv, struct corral_conf *conf)
{
    const char *path = "/etc/corral/corral.conf", *listen = NULL, *ports = NULL;
    char err[512];
    int opt;

    while ((opt = getopt(argc, argv, "c:l:p:")) != -1) {
        if (opt == 'c')
            path = optarg;
        else if (opt == 'l')
            listen = optarg;
        else if (opt == 'p')
            ports = optarg;
        else
            return -1;
    }
    if (optind != argc)
        return -1;
    if (corral_conf_load(path, conf, err, sizeof(err)) != 0 ||
        (listen && corral_conf_set(conf, "tunnel_listen", listen, err, sizeof(err)) != 0) ||
        (ports && corral_conf_set(conf, "tunnel_ports", ports, err, sizeof(err)) != 0)) {
        log_err("config: %s", err);
        return -2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct corral_conf conf;
    struct rconn rc;
    char ip[INET6_ADDRSTRLEN];
    unsigned lo, hi;
    int lfd, loaded;

    log_set_name("corral-tunneld");
    loaded = load_conf(argc, argv, &conf);
    if (loaded == -1)
        fprintf(stderr, "usage: corral-tunneld [-c corral.conf] [-l socket] [-p addr:low-high]\n");
    if (loaded != 0)
        return loaded == -1 ? 2 : 1;
    signal(SIGPIPE, SIG_IGN);
    fd_limit_raise("corral-tunneld"); /* a tunnel, its port and its streams */
    if (stop_signals_install(on_signal, 0) != 0)
        return 1;
    corral_conf_rconn(&conf, &rc);
    ports_of(&conf, ip, sizeof(ip), &lo, &hi);
    if (holders_init(ip, lo, hi, &rc) != 0 || holders_start_renewal() != 0) {
        log_err("out of memory");
        return 1;
    }
    lfd = listen_unix(conf.tunnel_listen);
    if (lfd < 0) {
        log_err("cannot listen on %s: %s", conf.tunnel_listen, strerror(errno));
        return 1;
    }
    log_info("holding tunnels at %s ports %u-%u; nginx hands them over at %s", ip, lo, hi,
             conf.tunnel_listen);
    accept_loop(lfd);
    close(lfd);
    unlink(conf.tunnel_listen);
    holders_stop_all();
    log_info("stopped");
    return 0;
}
