/* Unit tests of envd's parsers, run under ASan+UBSan (envd itself is a static
 * binary without them): Connect framing (envd/connect_rpc.c: the
 * envelope both ways, truncated and compressed frames, codes to statuses),
 * multipart/form-data (multipart.c: parts split across reads, quoted
 * boundaries, escaped file names, truncated bodies), client paths (paths.c:
 * "~", relative paths, "..", too long), base64, the permission gate
 * (unit_gate.c), HTTP requests (unit_http.c), signed URLs and Basic auth
 * (unit_auth.c), Connect call headers (unit_connect.c), /files headers
 * (unit_files.c), process.Process requests (unit_process.c) and the passwd
 * and group files (unit_users.c). Prints "N passed, N failed". */
#include "base64.h"
#include "check.h"
#include "connect_parse.h"
#include "connect_rpc.h"
#include "envd.h"
#include "lifecycle_log.h"
#include "multipart.h"
#include "net_env.h"
#include "paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

CHECK_COUNTERS;

/* The permission gate's table test (unit_gate.c): adds its counts to ours. */
void test_gate(int *total_passed, int *total_failed);
/* HTTP requests (unit_http.c), signed URLs and Basic auth (unit_auth.c),
 * Connect call headers (unit_connect.c), /files headers (unit_files.c),
 * process.Process requests (unit_process.c), the passwd and group files
 * (unit_users.c): likewise. */
void test_http(int *total_passed, int *total_failed);
void test_auth(int *total_passed, int *total_failed);
void test_connect(int *total_passed, int *total_failed);
void test_files(int *total_passed, int *total_failed);
void test_process(int *total_passed, int *total_failed);
void test_users(int *total_passed, int *total_failed);
/* POST /init's body (unit_init.c): likewise. */
void test_init(int *total_passed, int *total_failed);
/* The proxy's CA in the system bundle (unit_trust.c). */
void test_trust(int *total_passed, int *total_failed);

/* envd's configuration lives in its main.c, which is not linked here. */
struct envd_config envd_cfg = {.port = 49983, .default_user = "user"};

/* --- Connect framing --------------------------------------------------- */

/* rpc_parse_message of len bytes; the error's code and message into err. */
static json_t *parse_msg(const char *body, size_t len, int enveloped, struct rpc_error *err)
{
    memset(err, 0, sizeof(*err));
    return rpc_parse_message(err, body, len, enveloped);
}

static int refused_msg(const char *body, size_t len, int enveloped, const char *code,
                       const char *message)
{
    struct rpc_error err;
    json_t *j = parse_msg(body, len, enveloped, &err);

    if (j) {
        json_decref(j);
        return 0;
    }
    return err.code && !strcmp(err.code, code) && !strncmp(err.message, message, strlen(message));
}

static void test_frames(void)
{
    struct rpc_error err;
    json_t *msg = json_pack("{s:i}", "a", 1), *j;
    char big[400], *frame;
    size_t len = 0;

    /* a data frame: flag 0, big-endian length, the JSON */
    frame = rpc_encode_frame(msg, &len);
    CHECK(frame && len == 12 && !memcmp(frame, "\0\0\0\0\7{\"a\":1}", 12));
    j = frame ? parse_msg(frame, len, 1, &err) : NULL;
    CHECK(j && json_equal(j, msg) && err.code == NULL);
    json_decref(j);
    /* every way a frame can be cut short or overlong */
    for (size_t cut = 0; frame && cut < len; cut++)
        CHECK(refused_msg(frame, cut, 1, "invalid_argument",
                          cut < 5 ? "stream request has no envelope" : "envelope length mismatch"));
    free(frame);
    CHECK(refused_msg("\0\0\0\0\7{\"a\":1}{}", 14, 1, "invalid_argument",
                      "envelope length mismatch")); /* a second message */
    CHECK(
        refused_msg("\0\xff\xff\xff\xff{}", 7, 1, "invalid_argument", "envelope length mismatch"));
    CHECK(refused_msg("\1\0\0\0\2{}", 7, 1, "unimplemented",
                      "compressed messages are not supported"));
    CHECK(refused_msg("\0\0\0\0\3[1]", 8, 1, "invalid_argument", "request is not a JSON object"));
    CHECK(refused_msg("\0\0\0\0\2{x", 7, 1, "invalid_argument", "request is not a JSON object"));
    /* an empty message is {} */
    j = parse_msg("\0\0\0\0\0", 5, 1, &err);
    CHECK(j && json_is_object(j) && json_object_size(j) == 0);
    json_decref(j);
    j = parse_msg("", 0, 0, &err);
    CHECK(j && json_is_object(j) && json_object_size(j) == 0);
    json_decref(j);
    /* unary: the body is the JSON itself, no envelope */
    j = parse_msg("{\"path\":\"/tmp\"}", 15, 0, &err);
    CHECK(j && !strcmp(json_get_str(j, "path"), "/tmp"));
    json_decref(j);
    CHECK(refused_msg("\0\0\0\0\2{}", 7, 0, "invalid_argument", "request is not a JSON object"));
    CHECK(refused_msg("\"s\"", 3, 0, "invalid_argument", "request is not a JSON object"));
    CHECK(refused_msg("{\"a\":1", 6, 0, "invalid_argument", "request is not a JSON object"));
    /* a length over 255 uses the higher bytes, big-endian */
    memset(big, 'x', sizeof(big));
    big[sizeof(big) - 1] = '\0';
    json_decref(msg);
    msg = json_pack("{s:s}", "k", big + 100); /* {"k":"<299 x>"}: 307 bytes */
    frame = rpc_encode_frame(msg, &len);
    CHECK(frame && len == 312 && !memcmp(frame, "\0\0\0\1\x33", 5));
    j = frame ? parse_msg(frame, len, 1, &err) : NULL;
    CHECK(j && json_equal(j, msg));
    json_decref(j);
    free(frame);
    json_decref(msg);
}

static void test_codes(void)
{
    struct rpc_error e = {0};
    unsigned long v;
    json_t *o = json_pack("{s:i,s:s,s:i,s:s,s:s,s:b}", "n", 7, "s", "42", "neg", -1, "big",
                          "4294967296", "bad", "12x", "t", 1);

    CHECK(rpc_code_status("not_found") == 404 && rpc_code_status("unauthenticated") == 401);
    CHECK(rpc_code_status("permission_denied") == 403 && rpc_code_status("unimplemented") == 501);
    CHECK(rpc_code_status("resource_exhausted") == 429 && rpc_code_status("canceled") == 499);
    CHECK(rpc_code_status("deadline_exceeded") == 504 && rpc_code_status("already_exists") == 409);
    CHECK(rpc_code_status("no_such_code") == 500 && rpc_code_status("") == 500);
    rpc_fail_errno(&e, ENOENT, "open %s", "/x");
    CHECK(!strcmp(e.code, "not_found") && !strcmp(e.message, "open /x: No such file or directory"));
    rpc_fail_errno(&e, EROFS, "write");
    CHECK(!strcmp(e.code, "permission_denied"));
    rpc_fail_errno(&e, ENOTEMPTY, "remove");
    CHECK(!strcmp(e.code, "already_exists"));
    rpc_fail_errno(&e, ELOOP, "stat");
    CHECK(!strcmp(e.code, "failed_precondition"));
    rpc_fail_errno(&e, EIO, "read");
    CHECK(!strcmp(e.code, "internal"));
    /* proto3 JSON uint32: a number or a decimal string */
    CHECK(json_get_u32(o, "n", 9, &v) == 0 && v == 7);
    CHECK(json_get_u32(o, "s", 9, &v) == 0 && v == 42);
    CHECK(json_get_u32(o, "absent", 9, &v) == 0 && v == 9);
    CHECK(json_get_u32(o, "neg", 9, &v) == -1 && json_get_u32(o, "big", 9, &v) == -1);
    CHECK(json_get_u32(o, "bad", 9, &v) == -1 && json_get_u32(o, "t", 9, &v) == -1);
    CHECK(json_get_bool(o, "t", 0) == 1 && json_get_bool(o, "n", 0) == 0);
    CHECK(json_get_str(o, "s") && !json_get_str(o, "n"));
    json_decref(o);
}

/* --- multipart --------------------------------------------------------- */

/* A body handed out at most chunk bytes per read, as a socket would. */
struct mem_src {
    const char *p;
    size_t left, chunk;
};

static ssize_t mem_read(void *ctx, void *buf, size_t n)
{
    struct mem_src *s = ctx;

    if (n > s->chunk)
        n = s->chunk;
    if (n > s->left)
        n = s->left;
    memcpy(buf, s->p, n);
    s->p += n;
    s->left -= n;
    return (ssize_t)n;
}

/* Reads every part of body into out as "name|filename|content;" ... and
 * ends it with "=0" (the last part seen), "=-1" (malformed) or "=init" (no
 * boundary). Content is read through a 3-byte buffer. */
static void parts(const char *ctype, const char *body, size_t len, size_t chunk, char *out,
                  size_t outsz)
{
    static struct multipart mp;
    struct mem_src src = {body, len, chunk};
    char name[64], filename[64], piece[3];
    size_t o = 0;
    int rc;

    out[0] = '\0';
    if (multipart_init(&mp, ctype, mem_read, &src) != 0) {
        snprintf(out, outsz, "=init");
        return;
    }
    while ((rc = multipart_next(&mp, name, sizeof(name), filename, sizeof(filename))) == 1) {
        ssize_t n;
        o += (size_t)snprintf(out + o, outsz - o, "%s|%s|", name, filename);
        while ((n = multipart_read(&mp, piece, sizeof(piece))) > 0)
            o += (size_t)snprintf(out + o, outsz - o, "%.*s", (int)n, piece);
        if (n < 0) {
            rc = -1;
            break;
        }
        o += (size_t)snprintf(out + o, outsz - o, ";");
    }
    snprintf(out + o, outsz - o, "=%d", rc);
}

/* 1 when body parses to want, whatever the size of the reads. */
static int parses(const char *ctype, const char *body, const char *want)
{
    static const size_t chunks[] = {1, 2, 5, 13, 1 << 20};
    char got[1024];

    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        parts(ctype, body, strlen(body), chunks[i], got, sizeof(got));
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "multipart (reads of %zu): \"%s\", expected \"%s\"\n", chunks[i], got,
                    want);
            return 0;
        }
    }
    return 1;
}

#define CT "multipart/form-data; boundary=XyZ"

/* A part larger than the 128 KiB buffer, read whole in 4 KiB reads. */
static int test_large_part(void)
{
    static struct multipart mp;
    static char body[300000], content[200001];
    const char *head = "--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n";
    size_t n = strlen(head), got = 0;
    struct mem_src src;
    char name[16], fname[16];
    ssize_t r;

    snprintf(body, sizeof(body), "%s", head);
    memset(body + n, 'z', 200000);
    snprintf(body + n + 200000, sizeof(body) - n - 200000, "\r\n--XyZ--\r\n");
    src = (struct mem_src){body, strlen(body), 4096};
    if (multipart_init(&mp, CT, mem_read, &src) != 0 ||
        multipart_next(&mp, name, sizeof(name), fname, sizeof(fname)) != 1)
        return 0;
    while ((r = multipart_read(&mp, content + got, sizeof(content) - 1 - got)) > 0)
        got += (size_t)r;
    content[got] = '\0';
    return r == 0 && got == 200000 && strspn(content, "z") == 200000 && !strcmp(name, "file") &&
           multipart_next(&mp, name, sizeof(name), fname, sizeof(fname)) == 0;
}
#define DISP(name, file)                                                                           \
    "Content-Disposition: form-data; name=\"" name "\"; filename=\"" file "\"\r\n"

static void test_multipart(void)
{
    static char big[20000], hs[9001];

    CHECK(
        parses(CT,
               "--XyZ\r\n" DISP("file", "a.txt") "Content-Type: text/plain\r\n\r\nhello\r\n"
                                                 "--XyZ\r\n" DISP(
                                                     "file", "b.bin") "\r\n\r\n--X\r\n--XyZ--\r\n",
               "file|a.txt|hello;file|b.bin|\r\n--X;=0"));
    /* a preamble, an epilogue, transport padding, an empty part, a field */
    CHECK(parses(CT,
                 "ignored preamble\r\n--XyZ \t\r\nContent-Disposition: form-data; name=\"note\""
                 "\r\n\r\nhi\r\n--XyZ\r\n" DISP("file", "e") "\r\n\r\n--XyZ--\r\nepilogue",
                 "note||hi;file|e|;=0"));
    CHECK(parses(CT, "--XyZ--\r\n", "=0"));
    /* the boundary parameter: quoted, any case, among others */
    CHECK(parses("multipart/form-data; charset=utf-8; BOUNDARY=\"q;x\"",
                 "--q;x\r\n" DISP("file", "f") "\r\n1\r\n--q;x--", "file|f|1;=0"));
    CHECK(parses("multipart/form-data;boundary=b", "--b\r\n" DISP("f", "g") "\r\n2\r\n--b--",
                 "f|g|2;=0"));
    CHECK(parses("multipart/form-data", "--XyZ--", "=init"));
    CHECK(parses("multipart/form-data; xboundary=XyZ", "--XyZ--", "=init"));
    CHECK(parses("multipart/form-data; boundary=", "--XyZ--", "=init"));
    /* file names: escaped quotes, CR and LF as browsers send them, and \" */
    CHECK(parses(CT, "--XyZ\r\n" DISP("file", "a%22b%0Ac%0dd") "\r\nx\r\n--XyZ--",
                 "file|a\"b\nc\rd|x;=0"));
    CHECK(parses(CT, "--XyZ\r\n" DISP("file", "q\\\"r") "\r\nx\r\n--XyZ--", "file|q\"r|x;=0"));
    /* ".." in a file name is the caller's to resolve (path_resolve) */
    CHECK(parses(CT, "--XyZ\r\n" DISP("file", "../../etc/passwd") "\r\nx\r\n--XyZ--",
                 "file|../../etc/passwd|x;=0"));
    /* truncated bodies */
    CHECK(parses(CT, "--XyZ\r\n" DISP("file", "t") "\r\nab", "file|t|=-1"));
    CHECK(parses(CT, "--XyZ\r\n" DISP("file", "t") "\r\nabcdefghijkl", "file|t|abcdef=-1"));
    CHECK(parses(CT, "--XyZ\r\n" DISP("file", "t") "\r\nabc\r\n--XyZ", "file|t|abc;=-1"));
    CHECK(parses(CT, "--XyZ\r\n" DISP("file", "t"), "=-1")); /* headers never end */
    CHECK(parses(CT, "", "=-1"));
    CHECK(parses(CT, "no delimiter at all", "=-1"));
    CHECK(parses(CT, "--XyZx\r\n" DISP("file", "t") "\r\na\r\n--XyZ--", "=-1"));
    CHECK(parses(CT, "--XyZ\n" DISP("file", "t") "\r\na\r\n--XyZ--", "=-1"));
    /* a header line over 8 KiB */
    memset(hs, 'h', 9000);
    hs[9000] = '\0';
    snprintf(big, sizeof(big), "--XyZ\r\nX: %s\r\n\r\na\r\n--XyZ--", hs);
    CHECK(parses(CT, big, "=-1"));
    CHECK(test_large_part());
}

/* --- paths ------------------------------------------------------------- */

static const struct envd_user user = {
    .name = "user", .uid = 1000, .gid = 1000, .home = "/home/user"};

static int resolves(const char *in, const char *want)
{
    char out[4096], msg[256] = "";

    if (path_resolve(in, &user, out, sizeof(out), msg, sizeof(msg)) != 0 ||
        strcmp(out, want) != 0) {
        fprintf(stderr, "path \"%s\": \"%s\" (%s), expected \"%s\"\n", in, out, msg, want);
        return 0;
    }
    return 1;
}

static void test_paths(void)
{
    char out[4096], msg[512], in[5000], dir[] = "/tmp/unit-envd-XXXXXX", p[256];

    CHECK(resolves("", "/home/user"));
    CHECK(resolves("~", "/home/user"));
    CHECK(resolves("~/", "/home/user"));
    CHECK(resolves("~/a/b", "/home/user/a/b"));
    CHECK(resolves("a/b", "/home/user/a/b"));
    CHECK(resolves(".", "/home/user"));
    CHECK(resolves("/", "/"));
    CHECK(resolves("/a//b/./c/", "/a/b/c"));
    CHECK(resolves("/a/b/../c", "/a/c"));
    CHECK(resolves("../x", "/home/x"));
    /* ".." never climbs above "/" */
    CHECK(resolves("../../../../etc/passwd", "/etc/passwd"));
    CHECK(resolves("/..", "/"));
    CHECK(resolves("/../../a/..", "/"));
    CHECK(resolves("~/../../..", "/"));
    /* names that only look like "." or ".." */
    CHECK(resolves("/...", "/..."));
    CHECK(resolves("/a/..b/.c", "/a/..b/.c"));
    CHECK(path_resolve("~root/x", &user, out, sizeof(out), msg, sizeof(msg)) == -1 &&
          !strcmp(msg, "failed to expand path '~root/x' for user 'user': cannot expand "
                       "user-specific home dir"));
    memset(in, 'a', sizeof(in));
    in[0] = '/';
    in[sizeof(in) - 1] = '\0';
    CHECK(path_resolve(in, &user, out, sizeof(out), msg, sizeof(msg)) == -1 &&
          !strncmp(msg, "path too long: '/aaa", 20));
    in[4095] = '\0'; /* 4095 characters and the NUL fit */
    CHECK(path_resolve(in, &user, out, sizeof(out), msg, sizeof(msg)) == 0 && strlen(out) == 4095);
    CHECK(!strcmp(path_base("/a/b"), "b") && !strcmp(path_base("/"), "/") &&
          !strcmp(path_base("/a"), "a"));
    /* mkdir -p, and a file where a directory should be */
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    snprintf(p, sizeof(p), "%s/d/e/f", dir);
    CHECK(path_ensure_dirs(p, msg, sizeof(msg)) == 0 && access(p, F_OK) == 0);
    CHECK(path_ensure_dirs(p, msg, sizeof(msg)) == 0); /* already there */
    snprintf(p, sizeof(p), "%s/d/file", dir);
    {
        FILE *f = fopen(p, "w");
        CHECK(f != NULL);
        if (f)
            fclose(f);
    }
    snprintf(p, sizeof(p), "%s/d/file/g", dir);
    errno = 0;
    CHECK(path_ensure_dirs(p, msg, sizeof(msg)) == -1 && errno == ENOTDIR);
    snprintf(in, sizeof(in), "path is a file: %s/d/file", dir);
    CHECK(!strcmp(msg, in));
    snprintf(p, sizeof(p), "%s/d/file", dir);
    unlink(p);
    snprintf(p, sizeof(p), "%s/d/e/f", dir);
    rmdir(p);
    snprintf(p, sizeof(p), "%s/d/e", dir);
    rmdir(p);
    snprintf(p, sizeof(p), "%s/d", dir);
    rmdir(p);
    CHECK(rmdir(dir) == 0); /* nothing else was left behind */
}

/* --- base64 ------------------------------------------------------------ */

static void test_base64(void)
{
    size_t n = 0;
    char *e = base64_encode((const unsigned char *)"hi!?", 4), np[16];
    unsigned char *d;

    CHECK(e && !strcmp(e, "aGkhPw=="));
    free(e);
    d = base64_decode("aGkhPw==", 8, &n);
    CHECK(d && n == 4 && !memcmp(d, "hi!?", 4));
    free(d);
    d = base64_decode("-_8", 3, &n); /* the URL-safe alphabet: 0xfb 0xff */
    CHECK(d && n == 2 && d[0] == 0xfb && d[1] == 0xff);
    free(d);
    CHECK(base64_decode("aGk*", 4, &n) == NULL);
    base64_encode_nopad((const unsigned char *)"hi!?", 4, np);
    CHECK(!strcmp(np, "aGkhPw"));
}

/* A process is named in the sandbox's log by its command's base name only. */
static void test_cmd_name(void)
{
    char out[16];

    lifecycle_cmd_name("/bin/bash", out, sizeof(out));
    CHECK(strcmp(out, "bash") == 0);
    lifecycle_cmd_name("python3", out, sizeof(out));
    CHECK(strcmp(out, "python3") == 0);
    lifecycle_cmd_name("/usr/local/bin/a-very-long-command-name", out, sizeof(out));
    CHECK(strcmp(out, "a-very-long-com") == 0);
    lifecycle_cmd_name(NULL, out, sizeof(out));
    CHECK(out[0] == '\0');
    lifecycle_cmd_name("/trailing/", out, sizeof(out));
    CHECK(out[0] == '\0');
}

/* -net-env lines (decision 0074): NAME=VALUE sets, NAME alone unsets, and
 * anything else is left alone, whatever the sandbox wrote there. */
static void test_net_env(void)
{
    char name[16], path[] = "/tmp/unit-envd-net-env.XXXXXX";
    const char *value = NULL, *set;
    FILE *f = NULL;
    int fd;

    CHECK(net_env_line("HTTP_PROXY=http://corral-egress:3128", name, sizeof(name), &value) == 1);
    CHECK(strcmp(name, "HTTP_PROXY") == 0 && strcmp(value, "http://corral-egress:3128") == 0);
    CHECK(net_env_line("no_proxy", name, sizeof(name), &value) == 0 && !strcmp(name, "no_proxy"));
    CHECK(net_env_line("A=", name, sizeof(name), &value) == 1 && value[0] == '\0');
    CHECK(net_env_line("", name, sizeof(name), &value) == -1);
    CHECK(net_env_line("=x", name, sizeof(name), &value) == -1);
    CHECK(net_env_line("1A=x", name, sizeof(name), &value) == -1);
    CHECK(net_env_line("A B=x", name, sizeof(name), &value) == -1);
    CHECK(net_env_line("A_NAME_TOO_LONG_FOR_IT=x", name, sizeof(name), &value) == -1);

    static const char *const names[] = {"UNIT_NET_ENV_SET", "UNIT_NET_ENV_GONE", NULL};

    CHECK(net_env_apply("/nonexistent/net.env", names) == 0);
    setenv("UNIT_NET_ENV_GONE", "1", 1);
    setenv("UNIT_NET_ENV_KEPT", "1", 1);
    unsetenv("UNIT_NET_ENV_NOT_SET");
    fd = mkstemp(path);
    CHECK(fd >= 0 && (f = fdopen(fd, "w")) != NULL);
    if (fd < 0 || !f)
        return;
    /* The sandbox can write the file too: a name outside the list (its
     * resolver's, LD_PRELOAD, ...) is neither set nor unset. */
    fputs("UNIT_NET_ENV_SET=a=b\nUNIT_NET_ENV_GONE\n bad line\nUNIT_NET_ENV_KEPT\n"
          "UNIT_NET_ENV_NOT_SET=x\nLD_PRELOAD=/tmp/x.so\n",
          f);
    fclose(f);
    CHECK(net_env_apply(path, names) == 0);
    set = getenv("UNIT_NET_ENV_SET");
    CHECK(set && strcmp(set, "a=b") == 0);
    CHECK(getenv("UNIT_NET_ENV_GONE") == NULL);
    CHECK(getenv("UNIT_NET_ENV_KEPT") != NULL && getenv("UNIT_NET_ENV_NOT_SET") == NULL);
    CHECK(getenv("LD_PRELOAD") == NULL);
    unlink(path);
}

int main(void)
{
    test_frames();
    test_codes();
    test_multipart();
    test_paths();
    test_base64();
    test_cmd_name();
    test_net_env();
    test_gate(&passed, &failed);
    test_http(&passed, &failed);
    test_auth(&passed, &failed);
    test_connect(&passed, &failed);
    test_files(&passed, &failed);
    test_process(&passed, &failed);
    test_users(&passed, &failed);
    test_init(&passed, &failed);
    test_trust(&passed, &failed);
    return CHECK_SUMMARY();
}
