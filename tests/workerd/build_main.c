/* build-harness: workerd's step runner, layer cache and start/ready commands
 * against the real dockerd (docs/templates.md), on a plain container of
 * corral/base made here (no control plane: COPY's files come from a tar made
 * here with tar(1)). Fails, never skips, without dockerd or corral/base.
 *
 * Checks: RUN as the current USER in the current WORKDIR with the ENVs so
 * far, and as a step's own user; COPY of a directory (contents, symlink kept,
 * owner and mode) and of a file into a directory and to a new name; WORKDIR
 * made; a commit per step, then the whole prefix found cached with its state;
 * a force stops the reuse; a failing step's reason; the step timeout; start
 * with and without ready, and a ready that never succeeds; the last layer
 * pushed to a real registry (docker-registry, started here on a free port,
 * without auth: the X-Registry-Auth header is sent as workerd sends it) and
 * pulled back by digest, and a pull of what is not there failing with the
 * image named. */
#include "build_push.h"
#include "build_run.h"
#include "check.h"
#include "docker_exec.h"
#include "image_pull.h"
#include "layer_cache.h"
#include "start_ready.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

CHECK_COUNTERS;

static struct docker dk;
static char ctr[80];

static const char *sock(void)
{
    const char *s = getenv("DOCKER_SOCK");
    return s && *s ? s : "/var/run/docker.sock";
}

/* A tar of: app/a.txt, app/sub/b.txt, app/link -> a.txt, app/.hidden, one.txt. */
static int make_tar(char **buf, size_t *len)
{
    char dir[] = "/tmp/corral-bh.XXXXXX", cmd[512];
    FILE *p;
    size_t cap = 1 << 20;

    if (!mkdtemp(dir))
        return -1;
    snprintf(cmd, sizeof(cmd),
             "cd %s && mkdir -p app/sub && echo A > app/a.txt && echo B > app/sub/b.txt && "
             "ln -s a.txt app/link && echo H > app/.hidden && echo ONE > one.txt && "
             "tar -cf - app one.txt; rm -rf %s",
             dir, dir);
    p = popen(cmd, "r");
    *buf = malloc(cap);
    *len = p && *buf ? fread(*buf, 1, cap, p) : 0;
    return p && pclose(p) == 0 && *len > 0 ? 0 : -1;
}

static char *tar_bytes;
static size_t tar_len;
static int fetched;

static int fetch(void *ud, const char *hash, char **buf, size_t *len, char *err, size_t errlen)
{
    (void)ud;
    if (strcmp(hash, "h-files") != 0) {
        snprintf(err, errlen, "no files %s", hash);
        return 1;
    }
    fetched++;
    *buf = malloc(tar_len);
    memcpy(*buf, tar_bytes, tar_len);
    *len = tar_len;
    return 0;
}

static int lines;
static void on_line(void *ud, const char *line)
{
    (void)ud, (void)line;
    lines++;
}

/* Output of sh -c cmd as root in ctr (trailing newline dropped). */
static const char *sh(const char *cmd)
{
    static char tail[EXEC_TAIL_MAX + 1];
    char err[256];
    struct exec_spec s = {.user = "0", .cmd = json_pack("[s,s,s]", "/bin/sh", "-c", cmd)};
    int code = -1;

    if (docker_exec_run(&dk, ctr, &s, 20000, NULL, NULL, &code, tail, err, sizeof(err)) != 0 ||
        code != 0)
        snprintf(tail, sizeof(tail), "(failed %d: %s)", code, err);
    json_decref(s.cmd);
    return tail;
}

static int start_container(void)
{
    json_t *body = json_pack("{s:s, s:[s,s], s:{s:s}, s:[s]}", "Image", "corral/base", "Cmd",
                             "sleep", "infinity", "Labels", "corral.test", "build-harness", "Env",
                             "CORRAL_ENVD_ACCESS_TOKEN=secret-of-envd"),
           *ans = NULL;
    char path[256], err[256];
    long status = 0;

    snprintf(ctr, sizeof(ctr), "corral-build-harness-%d", (int)getpid());
    snprintf(path, sizeof(path), "/containers/create?name=%s", ctr);
    if (docker_call(&dk, "POST", path, body, 60000, &status, &ans, err, sizeof(err)) != 0 ||
        status != 201) {
        fprintf(stderr, "build-harness: create from corral/base: %ld %s (tests/lib/images.sh)\n",
                status, err);
        return -1;
    }
    json_decref(body);
    json_decref(ans);
    snprintf(path, sizeof(path), "/containers/%s/start", ctr);
    if (docker_call(&dk, "POST", path, NULL, 60000, &status, &ans, err, sizeof(err)) != 0 ||
        status != 204)
        return -1;
    json_decref(ans);
    return 0;
}

static json_t *steps(void)
{
    return json_loads(
        "[{\"type\":\"ENV\",\"args\":[\"FOO\",\"bar baz\",\"PATH\",\"/opt/bin:/usr/bin:/bin\"]},"
        "{\"type\":\"WORKDIR\",\"args\":[\"/app\"]},"
        "{\"type\":\"RUN\",\"args\":[\"echo \\\"$FOO\\\" > env.txt; whoami > who.txt; echo "
        "line1; echo line2\"]},"
        "{\"type\":\"COPY\",\"args\":[\"app\",\"/srv/app\",\"user\",\"0750\"],\"filesHash\":"
        "\"h-files\"},"
        "{\"type\":\"COPY\",\"args\":[\"one.txt\",\"/opt/x/\"],\"filesHash\":\"h-files\"},"
        "{\"type\":\"COPY\",\"args\":[\"one.txt\",\"renamed.txt\"],\"filesHash\":\"h-files\"},"
        "{\"type\":\"USER\",\"args\":[\"user\"]},"
        "{\"type\":\"RUN\",\"args\":[\"whoami > /tmp/who2; pwd > /tmp/pwd\"]},"
        "{\"type\":\"RUN\",\"args\":[\"whoami > /tmp/who3\",\"root\"]}]",
        0, NULL);
}

/* Runs and commits every step from the base; the last layer's id in image. */
static void run_all(struct build_io *io, json_t *all, const char *base_id, char *image)
{
    struct build_state st;
    struct build_step s;
    char key[LAYER_KEY_MAX], next[LAYER_KEY_MAX], why[512];
    size_t i;
    json_t *j;

    build_state_init(&st, "/home/user", "");
    snprintf(key, sizeof(key), "%s", base_id);
    json_array_foreach(all, i, j)
    {
        int rc = build_step_decode(j, &s, why, sizeof(why));
        if (rc == 0)
            rc = build_step_run(io, &s, &st, why, sizeof(why));
        if (rc == 0 && build_layer_key(key, j, next) == 0)
            rc = build_commit(io, next, &st, image, why, sizeof(why));
        if (rc != 0)
            fprintf(stderr, "step %zu: %s\n", i + 1, why);
        CHECK(rc == 0);
        snprintf(key, sizeof(key), "%s", next);
    }
    build_state_free(&st);
}

static void check_files(void)
{
    CHECK(strcmp(sh("cat /app/env.txt"), "bar baz") == 0);
    CHECK(strcmp(sh("cat /app/who.txt"), "root") == 0);
    CHECK(strcmp(sh("cat /srv/app/a.txt /srv/app/sub/b.txt /srv/app/.hidden"), "A\nB\nH") == 0);
    CHECK(strcmp(sh("readlink /srv/app/link"), "a.txt") == 0);
    CHECK(strcmp(sh("stat -c '%U %a' /srv/app/a.txt /srv/app/sub"), "user 750\nuser 750") == 0);
    CHECK(strcmp(sh("test ! -e /srv/app/app && echo flat"), "flat") == 0);
    CHECK(strcmp(sh("cat /opt/x/one.txt"), "ONE") == 0);
    CHECK(strcmp(sh("cat /app/renamed.txt"), "ONE") == 0);
    CHECK(strcmp(sh("cat /tmp/who2 /tmp/pwd /tmp/who3"), "user\n/app\nroot") == 0);
    CHECK(strcmp(sh("ls -a /tmp | grep -c corral-copy || true"), "0") == 0);
    CHECK(strcmp(sh("echo \"[$CORRAL_ENVD_ACCESS_TOKEN]\""), "[]") == 0);
}

/* The layer keeps the template's ENVs, never envd's token. */
static void check_layer_env(const char *image)
{
    char path[256], err[256], *env = NULL;
    long status = 0;
    json_t *ans = NULL;

    snprintf(path, sizeof(path), "/images/%s/json", image);
    if (docker_call(&dk, "GET", path, NULL, 30000, &status, &ans, err, sizeof(err)) == 0)
        env = json_dumps(json_object_get(json_object_get(ans, "Config"), "Env"), JSON_COMPACT);
    CHECK(env && strstr(env, "\"FOO=bar baz\"") && strstr(env, "\"CORRAL_ENVD_ACCESS_TOKEN=\"") &&
          !strstr(env, "secret-of-envd"));
    free(env);
    json_decref(ans);
}

static void check_cache(json_t *all, const char *image)
{
    json_t *build = json_pack("{s:O, s:b}", "steps", all, "force", 0);
    struct layer_plan p;
    struct build_state st;
    char err[256];

    CHECK(layer_plan_make(&dk, "corral/base", build, &p, err, sizeof(err)) == 0);
    CHECK(p.cached == (int)json_array_size(all) && strcmp(p.image, image) == 0);
    layer_plan_state(&dk, &p, &st);
    CHECK(strcmp(st.user, "user") == 0 && strcmp(st.workdir, "/app") == 0 &&
          json_array_size(st.env) == 2);
    build_state_free(&st);
    /* a force on step 4 stops the reuse after step 3 */
    json_object_set_new(json_array_get(all, 3), "force", json_true());
    CHECK(layer_plan_make(&dk, "corral/base", build, &p, err, sizeof(err)) == 0 && p.cached == 3);
    json_object_set_new(build, "force", json_true());
    CHECK(layer_plan_make(&dk, "corral/base", build, &p, err, sizeof(err)) == 0 && p.cached == 0);
    json_object_del(json_array_get(all, 3), "force");
    json_decref(build);
}

static void check_failures(struct build_io *io)
{
    json_t *bad = json_loads("{\"type\":\"RUN\",\"args\":[\"echo oops; exit 3\"]}", 0, NULL),
           *slow = json_loads("{\"type\":\"RUN\",\"args\":[\"sleep 5\"]}", 0, NULL),
           *nofiles = json_loads(
               "{\"type\":\"COPY\",\"args\":[\"a\",\"/b\"],\"filesHash\":\"h-absent\"}", 0, NULL);
    struct build_state st;
    struct build_step s;
    char why[512];

    build_state_init(&st, "/", "root");
    CHECK(build_step_decode(bad, &s, why, sizeof(why)) == 0 &&
          build_step_run(io, &s, &st, why, sizeof(why)) == 1 &&
          strcmp(why, "exit code 3: oops") == 0);
    io->step_timeout_ms = 1000;
    CHECK(build_step_decode(slow, &s, why, sizeof(why)) == 0 &&
          build_step_run(io, &s, &st, why, sizeof(why)) == 2 && strstr(why, "timeout"));
    CHECK(build_step_decode(nofiles, &s, why, sizeof(why)) == 0 &&
          build_step_run(io, &s, &st, why, sizeof(why)) == 1 && strstr(why, "h-absent"));
    build_state_free(&st);
    json_decref(bad);
    json_decref(slow);
    json_decref(nofiles);
}

static void check_start_ready(void)
{
    json_t *ok = json_pack("{s:s, s:s, s:s, s:s}", "cmd",
                           "sleep 0.6; touch /tmp/ready; exec sleep 100", "ready",
                           "test -f /tmp/ready", "user", "user", "workdir", "/home/user"),
           *alive = json_pack("{s:s}", "cmd", "exec sleep 100"),
           *dead = json_pack("{s:s}", "cmd", "exit 4"),
           *never = json_pack("{s:s, s:s, s:i}", "cmd", "true", "ready", "echo not yet; false",
                              "timeout_s", 1);
    char why[256] = "";

    CHECK(start_ready_run(&dk, ctr, ok, 1, why, sizeof(why)) == 0);
    CHECK(strcmp(sh("stat -c %U /tmp/ready"), "user") == 0);
    CHECK(start_ready_run(&dk, ctr, alive, 1, why, sizeof(why)) == 0);
    CHECK(start_ready_run(&dk, ctr, dead, 1, why, sizeof(why)) == 1 && strstr(why, "code 4"));
    CHECK(start_ready_run(&dk, ctr, never, 1, why, sizeof(why)) == 1 &&
          strcmp(why, "ready command did not succeed in 1s: not yet") == 0);
    json_decref(ok);
    json_decref(alive);
    json_decref(dead);
    json_decref(never);
}

static pid_t registry_pid;
static char registry_dir[] = "/tmp/corral-bh-reg.XXXXXX";

static int free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &n) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* docker-registry on 127.0.0.1:port (dockerd speaks plain HTTP to 127/8). */
static int start_registry(int port)
{
    char cfg[256], cmd[128];
    char *argv[] = {"docker-registry", "serve", cfg, NULL};
    FILE *f;

    if (!mkdtemp(registry_dir))
        return -1;
    snprintf(cfg, sizeof(cfg), "%s/config.yml", registry_dir);
    f = fopen(cfg, "w");
    if (!f)
        return -1;
    fprintf(f,
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: "
            "%s/data\nhttp:\n  addr: 127.0.0.1:%d\n",
            registry_dir, port);
    fclose(f);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa); /* its access log is noise here */
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawnp(&registry_pid, "docker-registry", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr,
                "build-harness: docker-registry not found (apt-get install docker-registry)\n");
        return -1;
    }
    snprintf(cmd, sizeof(cmd), "curl -sf -o /dev/null http://127.0.0.1:%d/v2/", port);
    for (int i = 0; i < 100; i++, usleep(100000))
        if (system(cmd) == 0)
            return 0;
    fprintf(stderr, "build-harness: docker-registry did not answer on port %d\n", port);
    return -1;
}

static void stop_registry(void)
{
    char cmd[128];

    if (registry_pid > 0) {
        kill(registry_pid, SIGTERM);
        waitpid(registry_pid, NULL, 0);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", registry_dir);
    if (strncmp(registry_dir, "/tmp/corral-bh-reg.", 19) == 0 && system(cmd) != 0)
        fprintf(stderr, "build-harness: %s left behind\n", registry_dir);
}

static void delete_image(const char *name)
{
    char path[512], err[256];
    json_t *ans = NULL;
    long status;

    snprintf(path, sizeof(path), "/images/%s?force=1", name);
    docker_call(&dk, "DELETE", path, NULL, 60000, &status, &ans, err, sizeof(err));
    json_decref(ans);
}

static void check_registry(const char *image)
{
    const char auth[] = "{\"registrytoken\":\"not-checked-by-this-registry\"}";
    char header[256] = "X-Registry-Auth: ", target[128], ref[256], err[600], digest[DIGEST_MAX];
    int port = free_port();

    EVP_EncodeBlock((unsigned char *)header + strlen(header), (const unsigned char *)auth,
                    (int)strlen(auth));
    for (char *p = header + 17; *p; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
    if (port < 0 || start_registry(port) != 0) {
        CHECK(!"a registry to push to");
        return;
    }
    snprintf(target, sizeof(target), "127.0.0.1:%d/corral/fleet/tpl-harness:bld-1", port);
    CHECK(build_push_with(&dk, image, target, header, digest, err, sizeof(err)) == 0 &&
          strncmp(digest, "sha256:", 7) == 0);
    snprintf(ref, sizeof(ref), "127.0.0.1:%d/corral/fleet/tpl-harness@%s", port, digest);
    delete_image(target);
    CHECK(image_pull_with(&dk, ref, header, err, sizeof(err)) == 0);
    delete_image(ref);
    snprintf(ref, sizeof(ref), "127.0.0.1:%d/corral/fleet/tpl-absent:bld-1", port);
    CHECK(image_pull_with(&dk, ref, header, err, sizeof(err)) == 1 &&
          strncmp(err, "pull 127.0.0.1:", 15) == 0 && strstr(err, "tpl-absent"));
    stop_registry();
}

static void cleanup(json_t *all, const char *base_id)
{
    char key[LAYER_KEY_MAX], id[LAYER_KEY_MAX], err[256], path[256];
    json_t *j, *ans;
    long status;
    size_t i;

    snprintf(path, sizeof(path), "/containers/%s?force=1", ctr);
    docker_call(&dk, "DELETE", path, NULL, 60000, &status, &ans, err, sizeof(err));
    json_decref(ans);
    snprintf(key, sizeof(key), "%s", base_id);
    json_array_foreach(all, i, j)
    {
        build_layer_key(key, j, key);
        while (layer_find(&dk, key, id, err, sizeof(err)) == 0) {
            snprintf(path, sizeof(path), "/images/%s?force=1", id);
            ans = NULL;
            if (docker_call(&dk, "DELETE", path, NULL, 60000, &status, &ans, err, sizeof(err)) !=
                    0 ||
                status != 200) {
                json_decref(ans);
                break;
            }
            json_decref(ans);
        }
    }
}

int main(void)
{
    json_t *all = steps();
    struct layer_plan base;
    struct build_io io = {
        .d = &dk, .ctr = ctr, .step_timeout_ms = 60000, .fetch = fetch, .line = on_line};
    char image[LAYER_KEY_MAX] = "", err[256];

    if (docker_init(&dk, sock()) != 0 || docker_ping(&dk, err, sizeof(err)) != 0) {
        fprintf(stderr, "build-harness: dockerd unreachable on %s: %s\n", sock(), err);
        return 1;
    }
    if (make_tar(&tar_bytes, &tar_len) != 0 || start_container() != 0 ||
        layer_plan_make(&dk, "corral/base", json_pack("{s:[]}", "steps"), &base, err,
                        sizeof(err)) != 0) {
        fprintf(stderr, "build-harness: setup failed (%s)\n", err);
        return 1;
    }
    cleanup(all, base.key); /* layers a crashed run left */
    start_container();
    run_all(&io, all, base.key, image);
    CHECK(fetched == 3 && lines >= 2);
    check_files();
    check_layer_env(image);
    check_cache(all, image);
    check_failures(&io);
    check_start_ready();
    check_registry(image);
    cleanup(all, base.key);
    json_decref(all);
    free(tar_bytes);
    docker_close(&dk);
    return CHECK_SUMMARY();
}
