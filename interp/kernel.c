#include "kernel.h"

#include "outputs.h"
#include "secret.h"
#include "wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define MAX_FRAMES 24
#define POLL_MS 100

enum { SHELL, IOPUB, STDIN, CONTROL, HB, NPORTS };

/* Corral's own kernels (decision 0088), in the directory kernel_set_dir
 * names: the template installs them beside the server. */
#define KERNELS_DIR "/usr/lib/corral-interp/kernels"
static char kernels_dir[PATH_MAX] = KERNELS_DIR;
static char bash_kernel[PATH_MAX] = KERNELS_DIR "/corral_bash_kernel.py";
static char js_kernel[PATH_MAX] = KERNELS_DIR "/corral_js_kernel.py";

void kernel_set_dir(const char *dir)
{
    snprintf(kernels_dir, sizeof(kernels_dir), "%s", dir);
    snprintf(bash_kernel, sizeof(bash_kernel), "%s/corral_bash_kernel.py", dir);
    snprintf(js_kernel, sizeof(js_kernel), "%s/corral_js_kernel.py", dir);
}

void kernel_env_init(void)
{
    const char *pp = getenv("PYTHONPATH");
    char path[2 * PATH_MAX + 2], parent[16];

    /* ipykernel ends itself when this parent is gone, however the server
     * ended (a SIGKILL leaves no time to stop kernels). */
    snprintf(parent, sizeof(parent), "%d", (int)getpid());
    setenv("JPY_PARENT_PID", parent, 1);
    snprintf(path, sizeof(path), "%s%s%s", kernels_dir, pp && *pp ? ":" : "", pp ? pp : "");
    setenv("PYTHONPATH", path, 1);
    /* debugpy's warning about frozen modules, on every start, is noise */
    setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1", 1);
}

const char *const *kernel_argv(const char *lang, const char *conn_file, const char *buf[8])
{
    /* corral_ext (on PYTHONPATH: spawn) adds chart data to figures and a
     * DataFrame's table. */
    const char *python[] = {"python3", "-m",      "ipykernel_launcher",
                            "-f",      conn_file, "--IPKernelApp.extensions=corral_ext",
                            NULL};
    const char *r[] = {"R", "--slave", "-e", "IRkernel::main()", "--args", conn_file, NULL};
    const char *bash[] = {"python3", bash_kernel, "-f", conn_file, NULL};
    const char *js[] = {"python3", js_kernel, "-f", conn_file, NULL};
    const char *ts[] = {"python3", js_kernel, "--ts", "-f", conn_file, NULL};
    const char *const *src = strcmp(lang, "python") == 0 ? python
                             : strcmp(lang, "r") == 0    ? r
                             : strcmp(lang, "bash") == 0 ? bash
                             : strcmp(lang, "js") == 0   ? js
                             : strcmp(lang, "ts") == 0   ? ts
                                                         : NULL;
    size_t i = 0;

    for (; src && src[i] && i < 7; i++)
        buf[i] = src[i];
    buf[i] = NULL;
    return buf;
}

/* NPORTS free ports of 127.0.0.1, held open together so they differ. */
static int free_ports(int ports[NPORTS])
{
    int fds[NPORTS], rc = 0;

    for (int i = 0; i < NPORTS; i++) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);

        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&a, sizeof(a)) != 0 ||
            getsockname(fds[i], (struct sockaddr *)&a, &len) != 0)
            rc = -1;
        ports[i] = ntohs(a.sin_port);
    }
    for (int i = 0; i < NPORTS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return rc;
}

/* The connection file the kernel reads: its ports, the key. 0600. */
static int write_conn_file(struct kernel *k, const int ports[NPORTS])
{
    json_t *c =
        json_pack("{s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:s}", "shell_port", ports[SHELL],
                  "iopub_port", ports[IOPUB], "stdin_port", ports[STDIN], "control_port",
                  ports[CONTROL], "hb_port", ports[HB], "ip", "127.0.0.1", "key", k->key,
                  "transport", "tcp", "signature_scheme", "hmac-sha256", "kernel_name", k->lang);
    int fd = open(k->conn_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc = -1;
    char *text = c ? json_dumps(c, JSON_COMPACT) : NULL;

    if (fd >= 0 && text && write(fd, text, strlen(text)) == (ssize_t)strlen(text))
        rc = 0;
    if (fd >= 0)
        close(fd);
    free(text);
    json_decref(c);
    return rc;
}

static void *connect_to(struct kernel *k, int type, int port)
{
    char ep[64];
    int zero = 0;
    void *s = zmq_socket(k->zctx, type);

    snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port);
    if (s && (zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero)) != 0 || zmq_connect(s, ep) != 0)) {
        zmq_close(s);
        s = NULL;
    }
    if (s && type == ZMQ_SUB)
        zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
    return s;
}

/* The kernel in cwd, its process group its own (an interrupt or a stop
 * reaches what it started). */
static int spawn(struct kernel *k)
{
    const char *buf[8];
    const char *const *argv = kernel_argv(k->lang, k->conn_file, buf);
    pid_t pid;

    if (!argv[0])
        return -1;
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        sigset_t none;

        /* The server's blocked SIGTERM and SIGINT (its signal thread's) and
         * its ignored SIGPIPE would outlive exec: the kernel gets neither
         * an interrupt nor the default it expects. */
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        setsid();
        if (chdir(k->cwd) != 0)
            _exit(127);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    k->pid = pid;
    return 0;
}

/* An ISO 8601 UTC time with microseconds, as the protocol's dates are. */
static void now_iso(char *out, size_t cap)
{
    struct timespec ts;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", (tm.tm_year + 1900) % 10000,
             (tm.tm_mon + 1) % 100, tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
             tm.tm_sec % 100, (int)(ts.tv_nsec / 1000) % 1000000);
}

/* msg_type with content (taken) on sock; its msg_id in id. 0, or -1. */
static int send_msg(struct kernel *k, void *sock, const char *type, json_t *content, char id[64])
{
    struct wire_msg m = {0};
    struct wire_out out;
    char date[40];
    int rc = -1;

    snprintf(id, 64, "%s-%lld", k->session, ++k->seq);
    now_iso(date, sizeof(date));
    m.header = wire_header(type, id, k->session, date);
    m.content = content;
    if (m.header && content &&
        wire_encode(&m, (const unsigned char *)k->key, strlen(k->key), &out) == 0) {
        rc = 0;
        for (size_t i = 0; rc == 0 && i < out.n; i++)
            if (zmq_send(sock, out.frames[i].data, out.frames[i].len,
                         i + 1 < out.n ? ZMQ_SNDMORE : 0) < 0)
                rc = -1;
        wire_out_free(&out); /* sent or not: the frames are this call's */
    }
    json_decref(m.header);
    json_decref(content);
    return rc;
}

/* One whole message from sock, checked; m empty on -1 (a bad one is
 * dropped: only the kernel, with the key, can sign). */
static int recv_msg(struct kernel *k, void *sock, struct wire_msg *m)
{
    zmq_msg_t parts[MAX_FRAMES], scratch;
    struct wire_frame f[MAX_FRAMES];
    size_t n = 0;
    int more = 1, over = 0, rc = -1;
    char err[96];

    memset(m, 0, sizeof(*m));
    while (more) {
        zmq_msg_t *p = n < MAX_FRAMES ? &parts[n] : &scratch;

        zmq_msg_init(p);
        if (zmq_msg_recv(p, sock, 0) < 0) {
            zmq_msg_close(p);
            break;
        }
        more = zmq_msg_more(p);
        if (p == &scratch) {
            zmq_msg_close(p);
            over = 1;
            continue;
        }
        f[n] = (struct wire_frame){zmq_msg_data(p), zmq_msg_size(p)};
        n++;
    }
    if (!over)
        rc = wire_decode(f, n, (const unsigned char *)k->key, strlen(k->key), m, err, sizeof(err));
    m->nids = 0; /* they pointed into the frames */
    for (size_t i = 0; i < n; i++)
        zmq_msg_close(&parts[i]);
    return rc;
}

static int parent_is(const struct wire_msg *m, const char *id)
{
    const char *p = json_string_value(json_object_get(m->parent, "msg_id"));

    return p && strcmp(p, id) == 0;
}

static int alive(struct kernel *k)
{
    if (k->pid > 0 && waitpid(k->pid, NULL, WNOHANG) == k->pid)
        k->pid = 0;
    return k->pid > 0;
}

/* kernel_info until it is answered on shell and seen on iopub (a SUB socket
 * misses what came before it joined). */
static int wait_ready(struct kernel *k, long wait_ms)
{
    int shell_ok = 0, iopub_ok = 0;
    char id[64] = "";

    for (long t = 0; t < wait_ms && !(shell_ok && iopub_ok) && alive(k); t += POLL_MS) {
        zmq_pollitem_t items[] = {{k->shell, 0, ZMQ_POLLIN, 0}, {k->iopub, 0, ZMQ_POLLIN, 0}};
        struct wire_msg m;

        if (t % 1000 == 0 && send_msg(k, k->shell, "kernel_info_request", json_object(), id) != 0)
            return -1;
        if (zmq_poll(items, 2, POLL_MS) <= 0)
            continue;
        if ((items[0].revents & ZMQ_POLLIN) && recv_msg(k, k->shell, &m) == 0) {
            shell_ok |= strcmp(wire_type(&m), "kernel_info_reply") == 0;
            wire_msg_clear(&m);
        }
        if ((items[1].revents & ZMQ_POLLIN) && recv_msg(k, k->iopub, &m) == 0) {
            iopub_ok = 1;
            wire_msg_clear(&m);
        }
    }
    return shell_ok && iopub_ok ? 0 : -1;
}

int kernel_start(struct kernel *k, const char *lang, const char *cwd, const char *dir, long wait_ms,
                 char *err, size_t errlen)
{
    int ports[NPORTS];
    const char *fail = NULL;

    memset(k, 0, sizeof(*k));
    snprintf(k->lang, sizeof(k->lang), "%s", lang);
    snprintf(k->cwd, sizeof(k->cwd), "%s", cwd);
    if (secret_random_hex(k->key, KERNEL_KEY_HEX / 2) != 0 ||
        secret_random_hex(k->session, 16) != 0)
        fail = "no randomness";
    else if (snprintf(k->conn_file, sizeof(k->conn_file), "%s/kernel-%s.json", dir, k->session) >=
             (int)sizeof(k->conn_file))
        fail = "the connection file's path is too long";
    else if (free_ports(ports) != 0 || write_conn_file(k, ports) != 0)
        fail = "cannot write the connection file";
    else if (!(k->zctx = zmq_ctx_new()) || !(k->shell = connect_to(k, ZMQ_DEALER, ports[SHELL])) ||
             !(k->iopub = connect_to(k, ZMQ_SUB, ports[IOPUB])) ||
             !(k->control = connect_to(k, ZMQ_DEALER, ports[CONTROL])))
        fail = "cannot make the kernel's sockets";
    else if (spawn(k) != 0)
        fail = "no kernel for this language";
    else if (wait_ready(k, wait_ms) != 0)
        fail = alive(k) ? "the kernel did not answer in time" : "the kernel exited at start";
    if (!fail)
        return 0;
    snprintf(err, errlen, "%s kernel: %s", lang, fail);
    kernel_stop(k);
    return -1;
}

/* One message of the execution id from shell or iopub: its line emitted
 * (unless the caller has gone), and what it settles. */
struct run {
    const char *id;
    kernel_emit_fn emit;
    void *ud;
    int idle, replied, gone;
    int since_gone; /* polls since the caller went */
    long long count;
};

/* The caller has gone: SIGINT again every half second (one sent before the
 * cell's handler runs is ignored by ipykernel), and a kernel still busy
 * after STUBBORN_POLLS is stopped (the next call starts a fresh one).
 * 1 when it was stopped. */
#define STUBBORN_POLLS 100
static int chase(struct kernel *k, struct run *r)
{
    if (r->since_gone++ % 5 == 0)
        kernel_interrupt(k);
    if (r->since_gone < STUBBORN_POLLS)
        return 0;
    kernel_stop(k);
    return 1;
}

static void take(struct kernel *k, struct run *r, void *sock)
{
    struct wire_msg m;
    json_t *line;

    if (recv_msg(k, sock, &m) != 0)
        return;
    if (parent_is(&m, r->id)) {
        const char *type = wire_type(&m);

        if (sock == k->shell && strcmp(type, "execute_reply") == 0) {
            r->replied = 1;
            r->count = json_integer_value(json_object_get(m.content, "execution_count"));
        } else if (strcmp(type, "status") == 0) {
            r->idle |= strcmp(json_string_value(json_object_get(m.content, "execution_state"))
                                  ? json_string_value(json_object_get(m.content, "execution_state"))
                                  : "",
                              "idle") == 0;
        } else if (!r->gone && (line = outputs_line(type, m.content))) {
            if (r->emit(r->ud, line) != 0)
                r->gone = 1;
        }
    }
    wire_msg_clear(&m);
}

static int run_cell(struct kernel *k, const char *code, int silent, kernel_emit_fn emit,
                    kernel_gone_fn gone, void *ud, char *err, size_t errlen)
{
    char id[64];
    struct run r = {.id = id, .emit = emit, .ud = ud};
    /* stop_on_error off: on, ipykernel aborts what arrives shortly after an
     * error (an interrupted cell's KeyboardInterrupt too), such as the next
     * call, or the silent code putting a failed call's env vars back. A
     * context runs one cell at a time anyway: there is no queue to stop. */
    json_t *req = json_pack("{s:s, s:b, s:b, s:{}, s:b, s:b}", "code", code, "silent", silent,
                            "store_history", !silent, "user_expressions", "allow_stdin", 0,
                            "stop_on_error", 0);

    if (!alive(k) || send_msg(k, k->shell, "execute_request", req, id) != 0) {
        snprintf(err, errlen, "the %s kernel is not running", k->lang);
        return -1;
    }
    while (!(r.idle && r.replied)) {
        zmq_pollitem_t items[] = {{k->shell, 0, ZMQ_POLLIN, 0}, {k->iopub, 0, ZMQ_POLLIN, 0}};

        if (!alive(k)) {
            if (!r.gone)
                emit(ud,
                     json_pack("{s:s, s:s, s:s, s:s}", "type", "error", "name", "KernelDied",
                               "value", "the kernel exited; it is started again on the next call",
                               "traceback", ""));
            kernel_stop(k);
            return 0;
        }
        if (!r.gone && gone(ud))
            r.gone = 1;
        if (r.gone && chase(k, &r))
            return 0;
        if (zmq_poll(items, 2, POLL_MS) <= 0)
            continue;
        if (items[1].revents & ZMQ_POLLIN)
            take(k, &r, k->iopub);
        if (items[0].revents & ZMQ_POLLIN)
            take(k, &r, k->shell);
    }
    if (!r.gone && !silent)
        emit(ud, outputs_count(r.count));
    return 0;
}

int kernel_execute(struct kernel *k, const char *code, kernel_emit_fn emit, kernel_gone_fn gone,
                   void *ud, char *err, size_t errlen)
{
    return run_cell(k, code, 0, emit, gone, ud, err, errlen);
}

static int discard(void *ud, json_t *line)
{
    (void)ud;
    json_decref(line);
    return 0;
}

static int never_gone(void *ud)
{
    (void)ud;
    return 0;
}

int kernel_run_silent(struct kernel *k, const char *code, char *err, size_t errlen)
{
    return run_cell(k, code, 1, discard, never_gone, NULL, err, errlen);
}

void kernel_interrupt(const struct kernel *k)
{
    if (k->pid > 0)
        kill(-k->pid, SIGINT);
}

void kernel_stop(struct kernel *k)
{
    if (k->pid > 0) {
        kill(-k->pid, SIGTERM);
        for (int i = 0; i < 10 && waitpid(k->pid, NULL, WNOHANG) == 0; i++)
            usleep(100 * 1000); /* a second to end, as jupyter_client gives */
        if (waitpid(k->pid, NULL, WNOHANG) == 0) {
            kill(-k->pid, SIGKILL);
            waitpid(k->pid, NULL, 0);
        }
        k->pid = 0;
    }
    if (k->shell)
        zmq_close(k->shell);
    if (k->iopub)
        zmq_close(k->iopub);
    if (k->control)
        zmq_close(k->control);
    if (k->zctx)
        zmq_ctx_term(k->zctx);
    k->shell = k->iopub = k->control = k->zctx = NULL;
    if (k->conn_file[0])
        unlink(k->conn_file);
}
