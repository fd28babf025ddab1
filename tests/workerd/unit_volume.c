/* Unit tests of the worker's side of the volume file API (decision 0071):
 * the request parser (workerd/volume_req.c), the data port's check of a
 * volume request's signature (dataport_head.c), and the file operations
 * (workerd/volume_files.c) on a real directory, with what a sandbox could
 * leave in a volume to escape it: symlinks out (absolute, relative, through
 * ".."), a FIFO, a symlinked directory. */
#include "check.h"
#include "dataport_head.h"
#include "volume_files.h"
#include "volume_req.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void unit_volume(int *total_passed, int *total_failed);

static int passed, failed;

#define VOL "vol-00112233445566778899"
#define KEY "worker-key-0123456789abcdef"
#define NOW 1700000000LL
/* HMAC-SHA-256 under KEY of "volume:corral-<VOL>:0a1b2c3d:1700000000", computed
 * apart (Python's hmac), not by the code under test. */
#define VSIG "d58d7a8e9ba4d54d830f840aabbb94b38612bf66422e9c57ef0675dd10eddd03"

static int parse(const char *line, struct volume_req *r)
{
    char head[8192], why[300];

    snprintf(head, sizeof(head), "%s HTTP/1.1\r\nHost: x\r\n\r\n", line);
    return volume_req_parse(head, strlen(head), r, why, sizeof(why));
}

/* 1 when line is refused with code and a reason starting with want. */
static int refused(const char *line, int code, const char *want)
{
    char head[8192], why[300] = "";
    struct volume_req r;

    snprintf(head, sizeof(head), "%s HTTP/1.1\r\n\r\n", line);
    if (volume_req_parse(head, strlen(head), &r, why, sizeof(why)) != code ||
        strncmp(why, want, strlen(want)) != 0) {
        fprintf(stderr, "  %s -> \"%s\"\n", line, why);
        return 0;
    }
    return 1;
}

static int normalises(const char *in, const char *want)
{
    char out[VOLUME_PATH_MAX];
    const char *why = NULL;

    return volume_path_normalise(in, out, sizeof(out), &why) == 0 && !strcmp(out, want);
}

static void test_paths(void)
{
    char out[8];
    const char *why = NULL;

    CHECK(normalises("/", "") && normalises("", "") && normalises(".", ""));
    CHECK(normalises("/a/b", "a/b") && normalises("a/b/", "a/b") &&
          normalises("//a//./b/.", "a/b"));
    CHECK(normalises("hello.txt", "hello.txt") && normalises("/...", "...") &&
          normalises("/a..b/..c", "a..b/..c"));
    CHECK(volume_path_normalise("..", out, sizeof(out), &why) == -1 && strstr(why, "'..'"));
    CHECK(volume_path_normalise("/a/../b", out, sizeof(out), &why) == -1);
    CHECK(volume_path_normalise("a/..", out, sizeof(out), &why) == -1);
    CHECK(volume_path_normalise("/abcdefgh", out, sizeof(out), &why) == -1 && strstr(why, "long"));
}

static void test_parse(void)
{
    struct volume_req r;

    CHECK(parse("GET /volumecontent/" VOL "/path?path=%2Fa%2Fb", &r) == 0 && r.op == VOP_STAT &&
          !strcmp(r.volume_id, VOL) && !strcmp(r.path, "a/b") && r.uid == -1 && r.depth == 1);
    CHECK(parse("GET /volumecontent/" VOL "/dir?path=/&depth=3", &r) == 0 && r.op == VOP_LIST &&
          r.depth == 3 && r.path[0] == '\0');
    CHECK(parse("PUT /volumecontent/" VOL "/file?path=x.txt&uid=1000&gid=1000&mode=420&force=true",
                &r) == 0 &&
          r.op == VOP_WRITE && r.uid == 1000 && r.gid == 1000 && r.mode == 0644 && r.force == 1);
    CHECK(parse("POST /volumecontent/" VOL "/dir?force=false&path=a%20b", &r) == 0 &&
          r.op == VOP_MKDIR && !r.force && !strcmp(r.path, "a b"));
    CHECK(parse("DELETE /volumecontent/" VOL "/path?path=a", &r) == 0 && r.op == VOP_REMOVE);
    CHECK(parse("PATCH /volumecontent/" VOL "/path?path=a", &r) == 0 && r.op == VOP_SET_META);
    CHECK(parse("GET /volumecontent/" VOL "/file?path=a", &r) == 0 && r.op == VOP_READ);
    /* traversal, in every spelling */
    CHECK(refused("GET /volumecontent/" VOL "/file?path=../../etc/passwd", 400, "path: '..'"));
    CHECK(refused("GET /volumecontent/" VOL "/file?path=%2e%2e%2fetc", 400, "path: '..'"));
    CHECK(refused("GET /volumecontent/" VOL "/file?path=a/%2E%2E", 400, "path: '..'"));
    CHECK(refused("GET /volumecontent/" VOL "/file?path=a%00b", 400, "malformed"));
    CHECK(refused("GET /volumecontent/" VOL "/file?path=%zz", 400, "malformed"));
    /* parameters: required, once, known to the operation, in range */
    CHECK(refused("GET /volumecontent/" VOL "/file", 400, "path: required"));
    CHECK(refused("GET /volumecontent/" VOL "/file?path=", 400, "path: must not be empty"));
    CHECK(refused("GET /volumecontent/" VOL "/file?path=a&path=b", 400, "path: given twice"));
    CHECK(refused("GET /volumecontent/" VOL "/file?path=a&depth=2", 400, "unknown query"));
    CHECK(refused("GET /volumecontent/" VOL "/path?path=a&uid=1", 400, "unknown query"));
    CHECK(refused("GET /volumecontent/" VOL "/dir?path=a&depth=0", 400, "depth:"));
    CHECK(refused("GET /volumecontent/" VOL "/dir?path=a&depth=65", 400, "depth:"));
    CHECK(refused("PUT /volumecontent/" VOL "/file?path=a&mode=512", 400, "mode:"));
    CHECK(refused("PUT /volumecontent/" VOL "/file?path=a&mode=2541", 400, "mode:")); /* 04755 */
    CHECK(parse("PUT /volumecontent/" VOL "/file?path=a&mode=511", &r) == 0 && r.mode == 0777);
    CHECK(refused("PUT /volumecontent/" VOL "/file?path=a&uid=-1", 400, "uid:"));
    CHECK(refused("PUT /volumecontent/" VOL "/file?path=a&uid=4294967295", 400, "uid:"));
    CHECK(refused("PUT /volumecontent/" VOL "/file?path=a&force=yes", 400, "force:"));
    CHECK(refused("PUT /volumecontent/" VOL "/file?path=a&color=red", 400, "unknown query"));
    /* operations */
    CHECK(refused("POST /volumecontent/" VOL "/file?path=a", 405, "method"));
    CHECK(refused("GET /volumecontent/" VOL "/other?path=a", 404, "no such operation"));
    CHECK(refused("GET /sandboxes/x", 404, "not a volume"));
    CHECK(refused("GET /volumecontent/" VOL, 404, "not a volume"));
}

static void test_meta(void)
{
    struct volume_req r = {.uid = -1, .gid = -1, .mode = -1};
    char why[200];

    CHECK(volume_meta_parse("{\"uid\":1001,\"mode\":493}", 23, &r, why, sizeof(why)) == 0 &&
          r.uid == 1001 && r.gid == -1 && r.mode == 0755);
    CHECK(volume_meta_parse("{}", 2, &r, why, sizeof(why)) == 0);
    CHECK(volume_meta_parse("{\"owner\":1}", 11, &r, why, sizeof(why)) == -1 &&
          strstr(why, "unknown field"));
    CHECK(volume_meta_parse("{\"mode\":2541}", 13, &r, why, sizeof(why)) == -1);
    CHECK(volume_meta_parse("{\"uid\":\"1\"}", 11, &r, why, sizeof(why)) == -1);
    CHECK(volume_meta_parse("[1]", 3, &r, why, sizeof(why)) == -1);
}

static int sig_check(const char *headers, const char **why)
{
    char text[1024];
    struct dataport_head h;

    snprintf(text, sizeof(text), "GET /volumecontent/" VOL "/dir?path=/ HTTP/1.1\r\n%s\r\n",
             headers);
    memset(&h, 0, sizeof(h));
    h.buf = text;
    h.len = strlen(text);
    if (dataport_head_parse(&h) != 0)
        return -9;
    return dataport_signature_check(&h, KEY, NULL, NOW, why);
}

static void test_signature(void)
{
    const char *why = "";

    CHECK(sig_check("X-Corral-Volume: corral-" VOL "\r\nX-Corral-Workspace: 0a1b2c3d\r\n"
                    "X-Corral-Gateway: 1700000000:" VSIG "\r\n",
                    &why) == 0);
    /* bound to the volume and the workspace */
    CHECK(sig_check("X-Corral-Volume: corral-vol-00112233445566778898\r\n"
                    "X-Corral-Workspace: 0a1b2c3d\r\nX-Corral-Gateway: 1700000000:" VSIG "\r\n",
                    &why) == -1 &&
          !strcmp(why, "invalid gateway signature"));
    CHECK(sig_check("X-Corral-Volume: corral-" VOL "\r\nX-Corral-Workspace: 0a1b2c3e\r\n"
                    "X-Corral-Gateway: 1700000000:" VSIG "\r\n",
                    &why) == -1 &&
          !strcmp(why, "invalid gateway signature"));
    /* a sandbox's signature does not stand for a volume's: the message without
     * "volume:" signed (12fe59...), or the volume headers beside a sandbox */
    CHECK(sig_check("X-Corral-Volume: corral-" VOL "\r\nX-Corral-Workspace: 0a1b2c3d\r\n"
                    "X-Corral-Gateway: 1700000000:"
                    "12fe598efc50fe217ecd87f2b997f8a383a5393c80e9c279bcf0f29b846b46da\r\n",
                    &why) == -1);
    CHECK(sig_check("X-Corral-Volume: corral-" VOL "\r\nX-Corral-Workspace: 0a1b2c3d\r\n"
                    "X-Corral-Sandbox: sb1\r\nX-Corral-Port: 49983\r\n"
                    "X-Corral-Gateway: 1700000000:" VSIG "\r\n",
                    &why) == -1 &&
          strstr(why, "no sandbox"));
    CHECK(sig_check("X-Corral-Volume: corral-" VOL "\r\nX-Corral-Gateway: 1700000000:" VSIG "\r\n",
                    &why) == -1 &&
          strstr(why, "a volume request names"));
    CHECK(sig_check("X-Corral-Volume: ../etc\r\nX-Corral-Workspace: 0a1b2c3d\r\n"
                    "X-Corral-Gateway: 1700000000:" VSIG "\r\n",
                    &why) == -1 &&
          strstr(why, "malformed X-Corral-Volume"));
    CHECK(sig_check("X-Corral-Volume: corral-" VOL "\r\nX-Corral-Workspace: 0a1b2c3d\r\n"
                    "X-Corral-Gateway: 1699999000:" VSIG "\r\n",
                    &why) == -1 &&
          !strcmp(why, "gateway signature expired"));
}

/* ---- the files, on a real directory ---- */

static char top[64], vol[96], outside[96];

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int exists(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0;
}

static const char *field(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k)) ?: "";
}

static long long num(json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static void setup(void)
{
    char p[160];

    snprintf(top, sizeof(top), "/tmp/unit-volume-XXXXXX");
    if (!mkdtemp(top))
        return;
    snprintf(vol, sizeof(vol), "%s/vol", top);
    snprintf(outside, sizeof(outside), "%s/outside", top);
    mkdir(vol, 0755);
    mkdir(outside, 0755);
    snprintf(p, sizeof(p), "%s/secret.txt", outside);
    put(p, "host secret\n");
    chmod(p, 0600);
    /* what a sandbox could leave: links out of the volume, a FIFO */
    snprintf(p, sizeof(p), "%s/up", vol);
    symlink("../outside", p);
    snprintf(p, sizeof(p), "%s/abs", vol);
    symlink(outside, p);
    snprintf(p, sizeof(p), "%s/deep", vol);
    symlink("../../../../../../../../..", p);
    snprintf(p, sizeof(p), "%s/fifo", vol);
    mkfifo(p, 0644);
}

static void test_escapes(int root)
{
    char why[300], p[160];
    json_t *o = NULL;
    struct vf_upload u;
    struct stat st;
    long long size = 0;
    int fd = -1;
    time_t t0;

    /* reads through a link out resolve inside the volume: nothing there */
    CHECK(vf_open_read(root, "up/secret.txt", &fd, &size, why, sizeof(why)) == 404);
    CHECK(vf_open_read(root, "abs/secret.txt", &fd, &size, why, sizeof(why)) == 404);
    CHECK(vf_open_read(root, "deep/etc/hostname", &fd, &size, why, sizeof(why)) == 404);
    CHECK(vf_stat(root, "up/secret.txt", &o, why, sizeof(why)) == 404);
    CHECK(vf_list(root, "abs", 1, &o, why, sizeof(why)) == 404);
    /* "deep" resolves to the volume's own root, whatever its dots */
    CHECK(vf_list(root, "deep", 1, &o, why, sizeof(why)) == 0 && json_array_size(o) == 4);
    json_decref(o);
    /* writes through them: refused, nothing made outside */
    CHECK(vf_upload_begin(root, "up/new.txt", &u, why, sizeof(why)) == 404);
    CHECK(vf_mkdir(root, "up/x/y", &(struct vf_owner){-1, -1, -1}, 1, &o, why, sizeof(why)) == 404);
    snprintf(p, sizeof(p), "%s/x", outside);
    CHECK(!exists(p));
    /* the link itself is what stat, chown and remove act on */
    CHECK(vf_stat(root, "up", &o, why, sizeof(why)) == 0 && !strcmp(field(o, "type"), "symlink") &&
          !strcmp(field(o, "target"), "../outside"));
    json_decref(o);
    CHECK(vf_set_meta(root, "abs", &(struct vf_owner){-1, -1, 0777}, &o, why, sizeof(why)) == 400);
    if (geteuid() == 0) {
        CHECK(vf_set_meta(root, "abs", &(struct vf_owner){4321, -1, -1}, &o, why, sizeof(why)) ==
              0);
        json_decref(o);
        CHECK(stat(outside, &st) == 0 && st.st_uid == 0);
    }
    snprintf(p, sizeof(p), "%s/secret.txt", outside);
    CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
    /* an upload replaces a link, never writes through it */
    snprintf(p, sizeof(p), "%s/link", vol);
    snprintf(why, sizeof(why), "%s/secret.txt", outside);
    symlink(why, p);
    CHECK(vf_upload_begin(root, "link", &u, why, sizeof(why)) == 0 && write(u.fd, "x", 1) == 1 &&
          vf_upload_commit(&u, "link", &(struct vf_owner){-1, -1, -1}, &o, why, sizeof(why)) == 0);
    json_decref(o);
    snprintf(p, sizeof(p), "%s/secret.txt", outside);
    CHECK(stat(p, &st) == 0 && st.st_size == 12);
    /* a FIFO is never opened (that would block): refused at once */
    t0 = time(NULL);
    CHECK(vf_open_read(root, "fifo", &fd, &size, why, sizeof(why)) == 400 &&
          strstr(why, "not a regular file"));
    CHECK(time(NULL) - t0 < 2);
    /* removing a directory that holds links out removes the links only */
    CHECK(vf_mkdir(root, "trap", &(struct vf_owner){-1, -1, -1}, 0, &o, why, sizeof(why)) == 0);
    json_decref(o);
    snprintf(p, sizeof(p), "%s/trap/out", vol);
    symlink(outside, p);
    CHECK(vf_remove(root, "trap", why, sizeof(why)) == 0);
    snprintf(p, sizeof(p), "%s/secret.txt", outside);
    CHECK(exists(p));
    CHECK(vf_remove(root, "abs", why, sizeof(why)) == 0 && exists(outside));
    CHECK(vf_remove(root, "", why, sizeof(why)) == 400);
}

static void test_files(int root)
{
    char why[300], buf[64];
    json_t *o = NULL;
    struct vf_upload u;
    long long size = 0;
    int fd = -1;
    ssize_t n;

    /* upload, stat, read */
    CHECK(vf_upload_begin(root, "/notes.txt", &u, why, sizeof(why)) == 0 &&
          write(u.fd, "hello", 5) == 5 &&
          vf_upload_commit(&u, "notes.txt", &(struct vf_owner){-1, -1, -1}, &o, why, sizeof(why)) ==
              0);
    CHECK(o && !strcmp(field(o, "name"), "notes.txt") && !strcmp(field(o, "path"), "/notes.txt") &&
          !strcmp(field(o, "type"), "file") && num(o, "size") == 5 && num(o, "mode") == 0644 &&
          num(o, "uid") == 0 && strlen(field(o, "mtime")) == 30);
    json_decref(o);
    CHECK(vf_open_read(root, "notes.txt", &fd, &size, why, sizeof(why)) == 0 && size == 5);
    n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
    CHECK(n == 5 && !memcmp(buf, "hello", 5));
    if (fd >= 0)
        close(fd);
    /* overwritten whole, with the owner and mode asked */
    CHECK(vf_upload_begin(root, "notes.txt", &u, why, sizeof(why)) == 0 &&
          write(u.fd, "hi", 2) == 2 &&
          vf_upload_commit(&u, "notes.txt", &(struct vf_owner){1000, 1000, 0600}, &o, why,
                           sizeof(why)) == 0 &&
          num(o, "size") == 2 && num(o, "mode") == 0600 && num(o, "uid") == 1000);
    json_decref(o);
    /* an aborted upload leaves the file as it was, and nothing else */
    CHECK(vf_upload_begin(root, "notes.txt", &u, why, sizeof(why)) == 0 &&
          write(u.fd, "partial", 7) == 7);
    vf_upload_abort(&u);
    CHECK(vf_stat(root, "notes.txt", &o, why, sizeof(why)) == 0 && num(o, "size") == 2);
    json_decref(o);
    /* where an upload cannot go */
    CHECK(vf_upload_begin(root, "no/such/dir.txt", &u, why, sizeof(why)) == 404);
    CHECK(vf_upload_begin(root, "", &u, why, sizeof(why)) == 409);
    CHECK(vf_open_read(root, "", &fd, &size, why, sizeof(why)) == 400 && strstr(why, "directory"));
    CHECK(vf_open_read(root, "nope", &fd, &size, why, sizeof(why)) == 404);
    /* directories: one level, parents with force, the leaf's mode */
    CHECK(vf_mkdir(root, "a/b", &(struct vf_owner){-1, -1, -1}, 0, &o, why, sizeof(why)) == 404);
    CHECK(vf_mkdir(root, "a/b/c", &(struct vf_owner){1000, 1000, 0700}, 1, &o, why, sizeof(why)) ==
              0 &&
          !strcmp(field(o, "type"), "directory") && !strcmp(field(o, "path"), "/a/b/c") &&
          num(o, "mode") == 0700 && num(o, "uid") == 1000);
    json_decref(o);
    CHECK(vf_stat(root, "a", &o, why, sizeof(why)) == 0 && num(o, "mode") == 0755);
    json_decref(o);
    CHECK(vf_mkdir(root, "a/b/c", &(struct vf_owner){-1, -1, -1}, 0, &o, why, sizeof(why)) == 409);
    CHECK(vf_mkdir(root, "a/b/c", &(struct vf_owner){-1, -1, -1}, 1, &o, why, sizeof(why)) == 0);
    json_decref(o);
    CHECK(vf_mkdir(root, "notes.txt/x", &(struct vf_owner){-1, -1, -1}, 1, &o, why, sizeof(why)) ==
          409);
    CHECK(vf_upload_begin(root, "a/b", &u, why, sizeof(why)) == 409);
    /* listing: one level, then two */
    CHECK(vf_list(root, "a", 1, &o, why, sizeof(why)) == 0 && json_array_size(o) == 1 &&
          !strcmp(field(json_array_get(o, 0), "path"), "/a/b"));
    json_decref(o);
    CHECK(vf_list(root, "/a", 3, &o, why, sizeof(why)) == 0 && json_array_size(o) == 2);
    json_decref(o);
    CHECK(vf_list(root, "notes.txt", 1, &o, why, sizeof(why)) == 404);
    /* metadata */
    CHECK(vf_set_meta(root, "notes.txt", &(struct vf_owner){1001, 1002, 0755}, &o, why,
                      sizeof(why)) == 0 &&
          num(o, "uid") == 1001 && num(o, "gid") == 1002 && num(o, "mode") == 0755);
    json_decref(o);
    CHECK(vf_set_meta(root, "", &(struct vf_owner){-1, -1, 0775}, &o, why, sizeof(why)) == 0 &&
          !strcmp(field(o, "name"), "/") && num(o, "mode") == 0775);
    json_decref(o);
    CHECK(vf_set_meta(root, "gone", &(struct vf_owner){-1, -1, 0775}, &o, why, sizeof(why)) == 404);
    /* removal: a file, a tree */
    CHECK(vf_remove(root, "notes.txt", why, sizeof(why)) == 0);
    CHECK(vf_remove(root, "notes.txt", why, sizeof(why)) == 404);
    CHECK(vf_remove(root, "a", why, sizeof(why)) == 0 &&
          vf_stat(root, "a", &o, why, sizeof(why)) == 404);
}

/* Entries of directory path (not "." or ".."). */
static int entries(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return d ? n : -1;
}

/* What cannot be owned as asked leaves nothing: no directory made with the
 * wrong owner, no half-made parents, no temporary name of an upload. Run as
 * a user that may not give files away (nobody), in a directory it may write,
 * so that the chown of each fails after the thing was made. */
static void test_failures_leave_nothing(int root)
{
    char p[160], why[300];
    int status = -1;
    pid_t pid;

    if (geteuid() != 0)
        return; /* needs to become another user */
    snprintf(p, sizeof(p), "%s/open", vol);
    CHECK(mkdir(p, 0700) == 0 && chmod(p, 0777) == 0);
    if ((pid = fork()) == 0) {
        const struct vf_owner given = {4321, -1, -1};
        struct vf_upload u;
        json_t *o = NULL;

        failed = 0;
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(99);
        CHECK(vf_mkdir(root, "open/d", &given, 0, &o, why, sizeof(why)) == 500 &&
              strstr(why, "not permitted"));
        CHECK(vf_mkdir(root, "open/p/q", &given, 1, &o, why, sizeof(why)) == 500);
        CHECK(vf_upload_begin(root, "open/f", &u, why, sizeof(why)) == 0 &&
              write(u.fd, "x", 1) == 1 &&
              vf_upload_commit(&u, "open/f", &given, &o, why, sizeof(why)) == 500);
        CHECK(u.fd == -1 && u.dir == -1);
        _exit(failed > 90 ? 90 : failed);
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    CHECK(entries(p) == 0);
    CHECK(vf_remove(root, "open", why, sizeof(why)) == 0);
}

/* A tree whose paths run past 4 KB: a listing deep enough to reach them is
 * refused naming why, never answered with names cut short (another file's). */
static void test_long_paths(int root)
{
    char seg[201], p[160], why[300];
    json_t *o = NULL;
    int fd, ok;

    memset(seg, 'a', 200);
    seg[200] = '\0';
    snprintf(p, sizeof(p), "%s/long", vol);
    ok = mkdir(p, 0755) == 0 && (fd = open(p, O_RDONLY | O_DIRECTORY)) >= 0;
    for (int i = 0; ok && i < 21; i++) { /* "long" and 21 * 201 bytes: past 4096 */
        int sub = mkdirat(fd, seg, 0755) == 0 ? openat(fd, seg, O_RDONLY | O_DIRECTORY) : -1;
        close(fd);
        ok = (fd = sub) >= 0;
    }
    if (ok)
        close(fd);
    CHECK(ok);
    CHECK(vf_list(root, "long", 30, &o, why, sizeof(why)) == 400 && strstr(why, "over 4095 bytes"));
    CHECK(o == NULL);
    CHECK(vf_list(root, "long", 3, &o, why, sizeof(why)) == 0 && json_array_size(o) == 3);
    json_decref(o);
    CHECK(vf_remove(root, "long", why, sizeof(why)) == 0);
}

static void cleanup(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
    if (top[0] && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", top);
}

void unit_volume(int *total_passed, int *total_failed)
{
    int root;

    test_paths();
    test_parse();
    test_meta();
    test_signature();
    setup();
    root = vf_open_root(vol);
    CHECK(root >= 0);
    if (root >= 0) {
        test_escapes(root);
        test_files(root);
        test_failures_leave_nothing(root);
        test_long_paths(root);
        close(root);
    }
    cleanup();
    *total_passed += passed;
    *total_failed += failed;
}
