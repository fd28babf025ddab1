/* agent_sessions.c: the envd sessions of an agent-mode workerd, as the
 * containers of a Docker worker are: created idempotently by sandbox id,
 * listed (an ended one "exited" with its status), killed. Creates run on
 * several threads at once, so the table has a lock; waitpid is only called
 * under it, so one session's status is taken once. */
#include "agent.h"

#include "envd_ready.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct session {
    char sbid[CTR_ID_MAX];
    char ip[16];
    char tier[16];
    pid_t pid;
    int ended;
    int told; /* its end was reported at once (agent_take_ended) */
    char reason[CTR_REASON_MAX];
};

static struct {
    pthread_mutex_t mu;
    struct session *v;
    int n, cap;
} tab = {.mu = PTHREAD_MUTEX_INITIALIZER};

static struct session *find_locked(const char *sbid)
{
    for (int i = 0; i < tab.n; i++)
        if (strcmp(tab.v[i].sbid, sbid) == 0)
            return &tab.v[i];
    return NULL;
}

static void remove_locked(struct session *s)
{
    *s = tab.v[--tab.n];
}

/* Takes an ended envd's status, once. Caller holds the lock. */
static void reap_locked(struct session *s)
{
    int status;

    if (s->ended || waitpid(s->pid, &status, WNOHANG) != s->pid)
        return;
    s->ended = 1;
    if (WIFSIGNALED(status))
        snprintf(s->reason, sizeof(s->reason), "envd killed by signal %d", WTERMSIG(status));
    else
        snprintf(s->reason, sizeof(s->reason), "exit code %d", WEXITSTATUS(status));
}

static void pid_path(const struct worker_conf *c, const char *sbid, char *out, size_t len)
{
    snprintf(out, len, "%.200s/agent/%.64s", c->state_dir, sbid);
}

static void pid_file_write(const struct worker_conf *c, const char *sbid, pid_t pid)
{
    char path[512];
    FILE *f;

    pid_path(c, sbid, path, sizeof(path));
    f = fopen(path, "we");
    if (!f || fprintf(f, "%d\n", (int)pid) < 0)
        log_warn("agent: %s: %s (a crash would leave this session running)", path, strerror(errno));
    if (f)
        fclose(f);
}

static void pid_file_remove(const struct worker_conf *c, const char *sbid)
{
    char path[512];

    pid_path(c, sbid, path, sizeof(path));
    unlink(path);
}

/* A leftover of a crashed run: killed when it still is our envd. */
static void kill_leftover(const struct worker_conf *c, const char *sbid)
{
    char path[512];
    FILE *f;
    int pid = 0;

    pid_path(c, sbid, path, sizeof(path));
    f = fopen(path, "re");
    if (f && fscanf(f, "%d", &pid) == 1 && pid > 1 && agent_pid_is_envd(pid)) {
        log_sandbox("info", sbid, "NONE", "session left by a previous run: killed");
        agent_kill_tree(pid);
    }
    if (f)
        fclose(f);
    unlink(path);
}

int agent_sessions_init(const struct worker_conf *c, char *err, size_t errlen)
{
    char dir[512];
    DIR *d;
    struct dirent *e;

    snprintf(dir, sizeof(dir), "%s/agent", c->state_dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)))
        if (containers_id_ok(e->d_name))
            kill_leftover(c, e->d_name);
    closedir(d);
    return 0;
}

/* 1 when nothing listens on ip:ENVD_PORT yet. */
static int addr_free(const char *ip)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(ENVD_PORT)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

    if (fd < 0 || inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* A loopback address no session of ours holds and nothing listens on. */
static int pick_addr(char *ip, size_t len)
{
    for (int tries = 0; tries < 64; tries++) {
        unsigned r = (unsigned)random();
        snprintf(ip, len, "127.77.%u.%u", (r >> 8) % 256, 1 + r % 254);
        pthread_mutex_lock(&tab.mu);
        int taken = 0;
        for (int i = 0; i < tab.n && !taken; i++)
            taken = strcmp(tab.v[i].ip, ip) == 0;
        pthread_mutex_unlock(&tab.mu);
        if (!taken && addr_free(ip))
            return 0;
    }
    return -1;
}

static void st_set(struct ctr_state *st, enum sb_state state, const char *reason)
{
    st->state = state;
    snprintf(st->reason, sizeof(st->reason), "%s", reason);
}

/* What an agent cannot be given: refused for good, naming why. */
static const char *unsupported(const struct worker_conf *c, json_t *sb)
{
    const char *tname = json_string_value(json_object_get(sb, "template"));

    if (!tname || !wconf_template(c, tname))
        return "unknown template (this agent serves one template, its -template)";
    if (json_array_size(json_object_get(sb, "volumes")) > 0)
        return "agent mode: volumes are not supported on a person's machine";
    if (json_string_value(json_object_get(sb, "image")))
        return "agent mode: a sandbox cannot start from a snapshot or a built template on a "
               "person's machine";
    if (json_object_get(sb, "build") || json_object_get(sb, "start"))
        return "agent mode: templates are not built or started on a person's machine";
    /* The person's side checks the walls again (decision 0062): an envd
     * without a token would run anyone's commands here, and a public
     * sandbox's exposed ports would need no traffic token. */
    if (!json_string_value(json_object_get(sb, "envd_access_token")))
        return "agent mode: a sandbox on a person's machine must be secure (an envd access "
               "token); secure: false is refused";
    if (!json_is_false(json_object_get(sb, "public")) && !c->agent.public_traffic)
        return "agent mode: public traffic is not allowed on this machine "
               "(allow_public_traffic = no); the sandbox must be private";
    return NULL;
}

static int add_session(const char *sbid, const char *ip, const char *tier, pid_t pid)
{
    struct session *s;

    pthread_mutex_lock(&tab.mu);
    if (tab.n == tab.cap) {
        int cap = tab.cap ? tab.cap * 2 : 16;
        struct session *v = realloc(tab.v, (size_t)cap * sizeof(*v));
        if (!v) {
            pthread_mutex_unlock(&tab.mu);
            return -1;
        }
        tab.v = v;
        tab.cap = cap;
    }
    s = &tab.v[tab.n++];
    memset(s, 0, sizeof(*s));
    snprintf(s->sbid, sizeof(s->sbid), "%s", sbid);
    snprintf(s->ip, sizeof(s->ip), "%s", ip);
    snprintf(s->tier, sizeof(s->tier), "%s", tier);
    s->pid = pid;
    pthread_mutex_unlock(&tab.mu);
    return 0;
}

/* 1 envd answers, 0 it ended (st says how) or did not answer in time. */
static int await_envd(const char *sbid, const char *ip, long ready_ms, struct ctr_state *st)
{
    struct timespec nap = {0, 50 * 1000000L};

    for (long waited = 0; waited < ready_ms; waited += 50) {
        struct session *s;
        int ended;

        if (envd_health_once(ip, ENVD_PORT))
            return 1;
        pthread_mutex_lock(&tab.mu);
        s = find_locked(sbid);
        if (s)
            reap_locked(s);
        ended = !s || s->ended;
        if (s && s->ended)
            snprintf(st->reason, sizeof(st->reason), "envd ended at start (%.200s)", s->reason);
        pthread_mutex_unlock(&tab.mu);
        if (ended)
            return 0;
        nanosleep(&nap, NULL);
    }
    snprintf(st->reason, sizeof(st->reason), "envd did not answer /health within %ld ms", ready_ms);
    return 0;
}

/* A create delivered again: what the session is now. 1 known, 0 not. */
static int existing(const char *sbid, struct ctr_state *st)
{
    struct session *s;
    int found;

    pthread_mutex_lock(&tab.mu);
    s = find_locked(sbid);
    if (s)
        reap_locked(s);
    found = s != NULL;
    if (s)
        st_set(st, s->ended ? SB_EXITED : SB_RUNNING, s->ended ? s->reason : "");
    pthread_mutex_unlock(&tab.mu);
    return found;
}

int agent_create(const struct worker_conf *c, json_t *sb, long ready_ms, struct ctr_state *st)
{
    const char *sbid = json_string_value(json_object_get(sb, "id")), *why;
    char ip[16], err[256];
    pid_t pid;

    memset(st, 0, sizeof(*st));
    if (!sbid || !containers_id_ok(sbid))
        return 1; /* nothing to report about an unusable id */
    snprintf(st->sbid, sizeof(st->sbid), "%s", sbid);
    snprintf(st->tier, sizeof(st->tier), "%s",
             json_string_value(json_object_get(sb, "tier")) ?: "NONE");
    if (existing(sbid, st))
        return 0;
    why = unsupported(c, sb);
    if (why || pick_addr(ip, sizeof(ip)) != 0) {
        st_set(st, SB_FAILED, why ? why : "no free loopback address for envd");
        return 1;
    }
    pid = agent_spawn(c, sb, sbid, ip, err, sizeof(err));
    if (pid < 0 || add_session(sbid, ip, st->tier, pid) != 0) {
        if (pid > 0)
            agent_kill_tree(pid), waitpid(pid, NULL, 0);
        st_set(st, SB_FAILED, pid < 0 ? err : "out of memory");
        return 1;
    }
    pid_file_write(c, sbid, pid);
    if (await_envd(sbid, ip, ready_ms, st)) {
        st_set(st, SB_RUNNING, "");
        return 0;
    }
    snprintf(err, sizeof(err), "%s", st->reason);
    agent_kill(c, sbid);
    st_set(st, SB_FAILED, err);
    return 1;
}

int agent_kill(const struct worker_conf *c, const char *sbid)
{
    struct session *s;
    pid_t pid = 0;
    int ended = 0;

    pthread_mutex_lock(&tab.mu);
    s = find_locked(sbid);
    if (s) {
        reap_locked(s);
        pid = s->pid;
        ended = s->ended;
        remove_locked(s);
    }
    pthread_mutex_unlock(&tab.mu);
    if (pid > 0 && !ended) {
        agent_kill_tree(pid);
        waitpid(pid, NULL, 0);
    }
    pid_file_remove(c, sbid);
    return 0;
}

int agent_list(struct ctr_state **out, int *n)
{
    struct ctr_state *v;

    pthread_mutex_lock(&tab.mu);
    v = calloc((size_t)tab.n + 1, sizeof(*v));
    if (!v) {
        pthread_mutex_unlock(&tab.mu);
        return -1;
    }
    for (int i = 0; i < tab.n; i++) {
        struct session *s = &tab.v[i];
        reap_locked(s);
        snprintf(v[i].sbid, sizeof(v[i].sbid), "%s", s->sbid);
        snprintf(v[i].tier, sizeof(v[i].tier), "%s", s->tier);
        st_set(&v[i], s->ended ? SB_EXITED : SB_RUNNING, s->ended ? s->reason : "");
    }
    *n = tab.n;
    pthread_mutex_unlock(&tab.mu);
    *out = v;
    return 0;
}

int agent_take_ended(struct ctr_state **out, int *n)
{
    struct ctr_state *v;

    pthread_mutex_lock(&tab.mu);
    v = calloc((size_t)tab.n + 1, sizeof(*v));
    *n = 0;
    for (int i = 0; v && i < tab.n; i++) {
        struct session *s = &tab.v[i];
        reap_locked(s);
        if (!s->ended || s->told)
            continue;
        s->told = 1;
        snprintf(v[*n].sbid, sizeof(v[*n].sbid), "%s", s->sbid);
        snprintf(v[*n].tier, sizeof(v[*n].tier), "%s", s->tier);
        st_set(&v[(*n)++], SB_EXITED, s->reason);
    }
    pthread_mutex_unlock(&tab.mu);
    *out = v;
    return v ? 0 : -1;
}

int agent_addr(const char *sbid, char *ip, size_t len)
{
    struct session *s;
    int rc = -1;

    pthread_mutex_lock(&tab.mu);
    s = find_locked(sbid);
    if (s && !s->ended) {
        snprintf(ip, len, "%s", s->ip);
        rc = 0;
    }
    pthread_mutex_unlock(&tab.mu);
    return rc;
}

void agent_stop_all(const struct worker_conf *c)
{
    char sbid[CTR_ID_MAX];

    for (;;) {
        pthread_mutex_lock(&tab.mu);
        if (tab.n == 0) {
            pthread_mutex_unlock(&tab.mu);
            return;
        }
        snprintf(sbid, sizeof(sbid), "%s", tab.v[0].sbid);
        pthread_mutex_unlock(&tab.mu);
        log_sandbox("info", sbid, "NONE", "workerd stops: session killed");
        agent_kill(c, sbid);
    }
}
