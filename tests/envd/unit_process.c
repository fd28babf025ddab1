/* Table tests of process.Process requests' fields (envd/process_parse.c):
 * a command's argv, PTY sizes, signals, process selectors, input bytes;
 * and a process's environment (env_parse.c): envd's own, then the user's,
 * then the request's envs, each replacing the last. Linked into unit-envd
 * (see unit_envd.c's main). */
#include "check.h"
#include "env_parse.h"
#include "process_parse.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CHECK_COUNTERS;

void test_process(int *total_passed, int *total_failed);

static json_t *json(const char *text)
{
    return json_loads(text, 0, NULL);
}

static int failed_with(const struct rpc_error *e, const char *code, const char *message)
{
    return e->code && !strcmp(e->code, code) && !strcmp(e->message, message);
}

/* config's argv joined by '|', or "!" and the error message. */
static int argv_is(const char *config, const char *want)
{
    struct rpc_error err = {0};
    json_t *c = json(config);
    const char **argv = process_parse_argv(c, &err);
    char got[1100] = "";
    size_t o = 0;

    if (argv == NULL)
        snprintf(got, sizeof(got), "!%s", err.message);
    for (size_t i = 0; argv && argv[i]; i++)
        o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%s", i ? "|" : "", argv[i]);
    free(argv);
    json_decref(c);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "  argv of %s: \"%s\", expected \"%s\"\n", config, got, want);
        return 0;
    }
    return 1;
}

static void test_argv(void)
{
    CHECK(argv_is("{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"echo hi\"]}", "/bin/sh|-c|echo hi"));
    CHECK(argv_is("{\"cmd\":\"ls\"}", "ls"));
    CHECK(argv_is("{\"cmd\":\"ls\",\"args\":[]}", "ls"));
    CHECK(argv_is("{\"cmd\":\"ls\",\"args\":\"-l\"}", "ls")); /* not an array: no args */
    CHECK(argv_is("{\"cmd\":\"ls\",\"args\":[\"\"]}", "ls|"));
    CHECK(argv_is("{\"args\":[\"x\"]}", "!process.cmd is required"));
    CHECK(argv_is("{\"cmd\":\"\"}", "!process.cmd is required"));
    CHECK(argv_is("{\"cmd\":7}", "!process.cmd is required"));
    CHECK(argv_is("{\"cmd\":\"ls\",\"args\":[\"a\",1]}", "!process.args[1] is not a string"));
    CHECK(argv_is("{\"cmd\":\"ls\",\"args\":[null]}", "!process.args[0] is not a string"));
}

struct pty_row {
    const char *pty; /* NULL: absent */
    int rc, on;
    unsigned short cols, rows;
};

static const struct pty_row pty_rows[] = {
    {NULL, 0, 0, 0, 0},
    {"null", 0, 0, 0, 0},
    {"{}", 0, 1, 80, 24},
    {"{\"size\":{}}", 0, 1, 80, 24},
    {"{\"size\":{\"cols\":120,\"rows\":40}}", 0, 1, 120, 40},
    {"{\"size\":{\"cols\":\"100\",\"rows\":\"30\"}}", 0, 1, 100, 30}, /* proto3 JSON */
    {"{\"size\":{\"cols\":65535,\"rows\":0}}", 0, 1, 65535, 0},
    {"{\"size\":{\"cols\":65536}}", -1, 0, 0, 0},
    {"{\"size\":{\"cols\":-1}}", -1, 0, 0, 0},
    {"{\"size\":{\"rows\":\"12x\"}}", -1, 0, 0, 0},
    {"{\"size\":{\"rows\":1.5}}", -1, 0, 0, 0},
};

static void test_pty(void)
{
    for (size_t i = 0; i < sizeof(pty_rows) / sizeof(pty_rows[0]); i++) {
        const struct pty_row *r = &pty_rows[i];
        struct rpc_error err = {0};
        struct proc_spec spec = {0};
        json_t *p = r->pty ? json(r->pty) : NULL;
        int rc = process_parse_pty(p, &spec, &err);
        int ok = rc == r->rc && spec.pty == r->on && spec.cols == r->cols && spec.rows == r->rows &&
                 (rc == 0 || failed_with(&err, "invalid_argument",
                                         "pty.size must hold cols and rows as integers"));
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  pty %s: %d %d %ux%u\n", r->pty, rc, spec.pty, spec.cols, spec.rows);
        json_decref(p);
    }
}

static int signal_is(const char *text, int want)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    int got = process_parse_signal(v);

    json_decref(v);
    return got == want;
}

static void test_signals(void)
{
    CHECK(signal_is("\"SIGNAL_SIGKILL\"", SIGKILL) && signal_is("\"SIGNAL_SIGTERM\"", SIGTERM));
    CHECK(signal_is("9", 9) && signal_is("15", 15) && signal_is("-3", -3));
    CHECK(signal_is("\"SIGNAL_SIGINT\"", 0) && signal_is("\"sigkill\"", 0));
    CHECK(signal_is("\"9\"", 0) && signal_is("null", 0) && signal_is("true", 0));
    CHECK(process_parse_signal(NULL) == 0);
}

static int selector_is(const char *sel, int rc, unsigned long pid, const char *tag)
{
    struct rpc_error err = {0};
    json_t *s = json(sel);
    unsigned long got_pid = 99;
    const char *got_tag = "unset";
    int got = process_parse_selector(s, &got_pid, &got_tag, &err);
    int ok =
        got == rc &&
        (rc < 0 ? failed_with(&err, "invalid_argument", "process selector needs a pid or a tag")
                : got_pid == pid && (tag ? got_tag && !strcmp(got_tag, tag) : !got_tag));

    json_decref(s);
    if (!ok)
        fprintf(stderr, "  selector %s: %d %lu\n", sel, got, got_pid);
    return ok;
}

static void test_selectors(void)
{
    CHECK(selector_is("{\"pid\":42}", 0, 42, NULL));
    CHECK(selector_is("{\"pid\":\"42\"}", 0, 42, NULL));
    CHECK(selector_is("{\"tag\":\"web\"}", 0, 0, "web"));
    CHECK(selector_is("{\"pid\":7,\"tag\":\"web\"}", 0, 7, "web"));
    CHECK(selector_is("{}", -1, 0, NULL));
    CHECK(selector_is("{\"pid\":0}", -1, 0, NULL));
    CHECK(selector_is("{\"pid\":-1,\"tag\":\"web\"}", -1, 0, NULL));
    CHECK(selector_is("{\"pid\":4294967296}", -1, 0, NULL));
    CHECK(selector_is("{\"pid\":\"4x\"}", -1, 0, NULL));
    CHECK(selector_is("{\"tag\":5}", -1, 0, NULL)); /* a tag must be a string */
}

/* input's bytes as "pty:<bytes>" / "stdin:<bytes>", "none", or "!". */
static int input_is(const char *input, const char *want)
{
    struct rpc_error err = {0};
    json_t *in = json(input);
    unsigned char *data = NULL;
    size_t len = 0;
    int to_pty = -1;
    int rc = process_parse_input(in, &data, &len, &to_pty, &err);
    char got[64];

    if (rc == 1)
        snprintf(got, sizeof(got), "%s:%.*s", to_pty ? "pty" : "stdin", (int)len, (char *)data);
    else
        snprintf(got, sizeof(got), "%s", rc == 0 ? "none" : "!");
    if (rc < 0 && !failed_with(&err, "invalid_argument", "input is not valid base64"))
        snprintf(got, sizeof(got), "?");
    free(data);
    json_decref(in);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "  input %s: \"%s\", expected \"%s\"\n", input, got, want);
        return 0;
    }
    return 1;
}

static void test_input(void)
{
    CHECK(input_is("{\"stdin\":\"aGk=\"}", "stdin:hi"));
    CHECK(input_is("{\"pty\":\"bHM=\"}", "pty:ls"));
    CHECK(input_is("{\"stdin\":\"aGk=\",\"pty\":\"bHM=\"}", "pty:ls")); /* pty first */
    CHECK(input_is("{\"stdin\":\"\"}", "stdin:"));
    CHECK(input_is("{}", "none"));
    CHECK(input_is("{\"stdin\":7}", "none")); /* not a string: nothing */
    CHECK(input_is("{\"stdin\":\"a*b\"}", "!"));
    CHECK(input_is("{\"pty\":\"!!\",\"stdin\":\"aGk=\"}", "!"));
}

/* --- a process's environment --------------------------------------------- */

static void test_env(void)
{
    char *base[] = {"PATH=/bin", "HOME=/root", "NOEQUALS", "A=1=2", "EMPTY=", NULL};
    struct envd_user u = {.name = "user", .home = "/home/user"};
    struct env_list e = {0};
    json_t *envs = json("{\"A\":\"x\",\"NEW\":\"n\",\"NUM\":1,\"USER\":\"other\",\"E\":\"\"}");
    const char *want[] = {"PATH=/bin",    "HOME=/home/user", "A=x", "EMPTY=", "USER=other",
                          "LOGNAME=user", "NEW=n",           "E=",  NULL};
    int ok;

    CHECK(env_build(&e, base, &u, envs) == 0);
    ok = e.n == 8;
    for (size_t i = 0; ok && want[i]; i++)
        ok = e.v[i] && strcmp(e.v[i], want[i]) == 0;
    CHECK(ok && e.v[e.n] == NULL);
    CHECK(env_list_get(&e, "NUM") == NULL && env_list_get(&e, "NOEQUALS") == NULL);
    CHECK(env_list_get(&e, "HOM") == NULL && strcmp(env_list_get(&e, "HOME"), "/home/user") == 0);
    env_list_free(&e);
    json_decref(envs);
    /* no envs at all; many variables grow the list */
    memset(&e, 0, sizeof(e));
    CHECK(env_build(&e, base + 5, &u, NULL) == 0 && e.n == 3);
    for (int i = 0; i < 200; i++) {
        char k[16];
        snprintf(k, sizeof(k), "V%d", i);
        CHECK(env_list_set(&e, k, "v") == 0);
    }
    CHECK(e.n == 203 && e.v[203] == NULL && strcmp(env_list_get(&e, "V199"), "v") == 0);
    env_list_free(&e);
}

void test_process(int *total_passed, int *total_failed)
{
    test_argv();
    test_pty();
    test_signals();
    test_selectors();
    test_input();
    test_env();
    *total_passed += passed;
    *total_failed += failed;
}
