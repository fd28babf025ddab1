/* Table test of the permission gate (envd/gate_decide.c): each of the
 * six branches wins where it should and loses where an earlier one applies;
 * a session grant dies with its gate state (its sandbox's envd), a permanent
 * grant survives a restart (a new state loaded from the grants file). Then
 * the parts that feed the engine: canonical paths (symlinks, "..", "//",
 * paths that do not exist yet), hard-link aliases, the words of a command,
 * the rule files. Linked into unit-envd (see unit_envd.c's main). */
#include "check.h"
#include "gate.h"
#include "gate_argv.h"
#include "gate_canon.h"
#include "gate_decide.h"
#include "gate_rules.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

CHECK_COUNTERS;

void test_gate(int *total_passed, int *total_failed);

static void fill_state(struct gate_state *s, int strict)
{
    memset(s, 0, sizeof(*s));
    s->strict = strict;
    s->work_tree = "/w";
    gate_list_add(&s->hardlocks, "/home/u/.ssh");
    gate_list_add(&s->hardlocks, "/w/secret");
    gate_list_add(&s->deny_paths, "/w/denied");
    gate_list_add(&s->deny_paths, "/opt/perm/blocked");
    gate_list_add(&s->deny_cmds, "curl *");
    gate_list_add(&s->perm_paths, "/opt/perm");
    gate_list_add(&s->perm_paths, "/home/u/.ssh"); /* a grant never beats a hardlock */
    gate_list_add(&s->perm_cmds, "make *");
    gate_list_add(&s->sess_paths, "/srv/sess");
    gate_list_add(&s->sess_paths, "/opt/perm/x"); /* permanent is checked first */
    gate_list_add(&s->sess_cmds, "ls *");
}

static void free_state(struct gate_state *s)
{
    struct gate_list *lists[] = {&s->hardlocks, &s->deny_paths, &s->deny_cmds, &s->perm_paths,
                                 &s->perm_cmds, &s->sess_paths, &s->sess_cmds};
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        gate_list_free(lists[i]);
}

struct file_row {
    const char *path;
    enum gate_op op;
    int subtree;
    enum gate_branch branch;
    enum gate_answer answer;
};

static const struct file_row file_rows[] = {
    {"/home/u/.ssh/id_rsa", GATE_READ, 0, GB_HARDLOCK, GA_DENY}, /* granted, still hardlocked */
    {"/home/u/.ssh", GATE_STAT, 0, GB_HARDLOCK, GA_DENY},
    {"/w/secret/key", GATE_READ, 0, GB_HARDLOCK, GA_DENY}, /* beats the work tree */
    {"/w", GATE_REMOVE, 1, GB_HARDLOCK, GA_DENY},          /* /w/secret lies below */
    {"/home/u", GATE_REMOVE, 1, GB_HARDLOCK, GA_DENY},
    {"/w", GATE_LIST, 0, GB_WORKTREE, GA_ALLOW},        /* depth 1 does not reach */
    {"/w/denied/x", GATE_WRITE, 0, GB_POLICY, GA_DENY}, /* beats the work tree */
    {"/w/sub", GATE_MOVE, 1, GB_WORKTREE, GA_ALLOW},
    {"/w", GATE_WATCH, 1, GB_HARDLOCK, GA_DENY},               /* recursive: reaches /w/secret */
    {"/opt/perm/blocked/f", GATE_READ, 0, GB_POLICY, GA_DENY}, /* beats a permanent grant */
    {"/w/a.txt", GATE_WRITE, 0, GB_WORKTREE, GA_ALLOW},
    {"/opt/perm/x", GATE_READ, 0, GB_PERMANENT, GA_ALLOW}, /* beats the session grant */
    {"/opt/perm", GATE_READ, 0, GB_PERMANENT, GA_ALLOW},
    {"/srv/sess/y", GATE_READ, 0, GB_SESSION, GA_ALLOW},
    {"/w2/x", GATE_READ, 0, GB_ASK, GA_DENY}, /* /w is no prefix of /w2 */
    {"/opt/permanent", GATE_READ, 0, GB_ASK, GA_DENY},
    {"/opt", GATE_REMOVE, 1, GB_POLICY, GA_DENY}, /* /opt/perm/blocked below */
    {"/home/u/.sshx", GATE_READ, 0, GB_ASK, GA_DENY},
};

static int file_verdict(const struct gate_state *s, const struct file_row *r,
                        struct gate_verdict *v)
{
    struct gate_request q = {.op = r->op, .path = r->path, .subtree = r->subtree};

    *v = gate_decide(s, &q);
    return v->branch == r->branch && v->answer == r->answer;
}

static void test_file_rows(void)
{
    struct gate_state s;

    fill_state(&s, 1);
    for (size_t i = 0; i < sizeof(file_rows) / sizeof(file_rows[0]); i++) {
        struct gate_verdict v;
        int ok = file_verdict(&s, &file_rows[i], &v);
        if (!ok)
            fprintf(stderr, "row %zu (%s %s): got %s/%d\n", i, gate_op_name(file_rows[i].op),
                    file_rows[i].path, gate_branch_name(v.branch), v.answer);
        CHECK(ok);
    }
    /* prompt mode: the same ask is the person's */
    s.strict = 0;
    struct gate_request q = {.op = GATE_READ, .path = "/tmp/x"};
    struct gate_verdict v = gate_decide(&s, &q);
    CHECK(v.branch == GB_ASK && v.answer == GA_ASK);
    free_state(&s);
}

struct exec_row {
    const char *command, *exe, *cwd;
    const char *args[3];
    enum gate_branch branch;
    enum gate_answer answer;
};

static const struct exec_row exec_rows[] = {
    {"cat /home/u/.ssh/id_rsa",
     "/usr/bin/cat",
     "/w",
     {"/home/u/.ssh/id_rsa"},
     GB_HARDLOCK,
     GA_DENY},
    {"make all", "/usr/bin/make", "/w/secret", {NULL}, GB_HARDLOCK, GA_DENY}, /* cwd hardlocked */
    {"/home/u/.ssh/run", "/home/u/.ssh/run", "/w", {NULL}, GB_HARDLOCK, GA_DENY},
    {"curl http://x", "/usr/bin/curl", "/w", {NULL}, GB_POLICY, GA_DENY},
    {"cat /w/denied/f", "/usr/bin/cat", "/w", {"/w/denied/f"}, GB_POLICY, GA_DENY},
    {"cat /w/a /w/b", "/usr/bin/cat", "/w", {"/w/a", "/w/b"}, GB_WORKTREE, GA_ALLOW},
    {"cat /w/a /tmp/b", "/usr/bin/cat", "/w", {"/w/a", "/tmp/b"}, GB_ASK, GA_DENY},
    {"make all", "/usr/bin/make", "/tmp", {NULL}, GB_PERMANENT, GA_ALLOW},
    {"ls -l", "/usr/bin/ls", "/tmp", {NULL}, GB_SESSION, GA_ALLOW},
    {"ls", "/usr/bin/ls", "/tmp", {NULL}, GB_ASK, GA_DENY}, /* "ls *" needs the space */
};

static void test_exec_rows(void)
{
    struct gate_state s;

    fill_state(&s, 1);
    for (size_t i = 0; i < sizeof(exec_rows) / sizeof(exec_rows[0]); i++) {
        const struct exec_row *r = &exec_rows[i];
        size_t n = 0;
        while (n < 3 && r->args[n] != NULL)
            n++;
        struct gate_request q = {.op = GATE_EXEC,
                                 .command = r->command,
                                 .exe = r->exe,
                                 .cwd = r->cwd,
                                 .args = r->args,
                                 .nargs = n};
        struct gate_verdict v = gate_decide(&s, &q);
        if (v.branch != r->branch || v.answer != r->answer)
            fprintf(stderr, "exec row %zu (%s): got %s/%d\n", i, r->command,
                    gate_branch_name(v.branch), v.answer);
        CHECK(v.branch == r->branch && v.answer == r->answer);
    }
    free_state(&s);
}

/* A session grant lives in one gate state; a permanent one in the grants file. */
static void test_grant_lifetimes(const char *dir)
{
    static const struct gate_rule_verbs allow = {"allow", "allow-command"};
    struct gate_state s = {.strict = 1, .work_tree = "/w"};
    struct gate_request q = {.op = GATE_READ, .path = "/data/report"};
    char grants[PATH_MAX], msg[512];

    gate_list_add(&s.sess_paths, "/data");
    CHECK(gate_decide(&s, &q).branch == GB_SESSION);
    free_state(&s);
    /* the sandbox ended: its envd's memory is gone, a new state asks again */
    struct gate_state next = {.strict = 1, .work_tree = "/w"};
    CHECK(gate_decide(&next, &q).branch == GB_ASK);

    snprintf(grants, sizeof(grants), "%s/grants", dir);
    CHECK(gate_rules_append(grants, "allow", "/data") == 0);
    CHECK(gate_rules_append(grants, "allow-command", "make *") == 0);
    CHECK(gate_rules_append(grants, "allow", "/bad\nline") < 0);
    /* envd restarted: the grants file is read into a fresh state */
    struct gate_state restarted = {.strict = 1, .work_tree = "/w"};
    CHECK(gate_rules_load(grants, &allow, 1, &restarted.perm_paths, &restarted.perm_cmds, msg,
                          sizeof(msg)) == 0);
    struct gate_verdict v = gate_decide(&restarted, &q);
    CHECK(v.branch == GB_PERMANENT && v.answer == GA_ALLOW);
    struct gate_request make = {
        .op = GATE_EXEC, .command = "make test", .exe = "/usr/bin/make", .cwd = "/tmp"};
    CHECK(gate_decide(&restarted, &make).branch == GB_PERMANENT);
    free_state(&restarted);
    free_state(&next);
}

static void test_rules_file(const char *dir)
{
    static const struct gate_rule_verbs deny = {"deny", "deny-command"};
    struct gate_list paths = {0}, cmds = {0};
    char file[PATH_MAX], msg[512];
    FILE *f;

    snprintf(file, sizeof(file), "%s/policy", dir);
    f = fopen(file, "w");
    fprintf(f, "# comment\n\ndeny /etc/../etc/shadow\ndeny-command rm -rf *\n");
    fclose(f);
    CHECK(gate_rules_load(file, &deny, 0, &paths, &cmds, msg, sizeof(msg)) == 0);
    CHECK(paths.n == 1 && strcmp(paths.v[0], "/etc/shadow") == 0);
    CHECK(cmds.n == 1 && strcmp(cmds.v[0], "rm -rf *") == 0);
    f = fopen(file, "w");
    fprintf(f, "deny relative/path\n");
    fclose(f);
    CHECK(gate_rules_load(file, &deny, 0, &paths, &cmds, msg, sizeof(msg)) < 0);
    CHECK(strstr(msg, ":1:") != NULL);
    f = fopen(file, "w");
    fprintf(f, "allow /x\n"); /* the policy file has no allow */
    fclose(f);
    CHECK(gate_rules_load(file, &deny, 0, &paths, &cmds, msg, sizeof(msg)) < 0);
    CHECK(gate_rules_load("/nonexistent/policy", &deny, 0, &paths, &cmds, msg, sizeof(msg)) < 0);
    CHECK(gate_rules_load("/nonexistent/grants", &deny, 1, &paths, &cmds, msg, sizeof(msg)) == 0);
    gate_list_free(&paths);
    gate_list_free(&cmds);

    char *pat = gate_rules_literal_pattern("echo a*b [x] ?");
    CHECK(fnmatch(pat, "echo a*b [x] ?", 0) == 0);
    CHECK(fnmatch(pat, "echo aXb [x] ?", 0) != 0);
    free(pat);
}

static void path_in(const char *dir, const char *rel, char *out)
{
    if (snprintf(out, PATH_MAX, "%s/%s", dir, rel) >= PATH_MAX)
        out[0] = '\0';
}

static int canon_is(const char *in, const char *want)
{
    char out[PATH_MAX];

    if (gate_canon(in, out, sizeof(out)) < 0)
        return 0;
    if (strcmp(out, want) != 0)
        fprintf(stderr, "gate_canon(%s) = %s, want %s\n", in, out, want);
    return strcmp(out, want) == 0;
}

static void test_canon(const char *dir)
{
    char real[PATH_MAX], p[PATH_MAX], want[PATH_MAX], link[PATH_MAX];

    CHECK(realpath(dir, real) != NULL);
    path_in(real, "tree", p);
    CHECK(mkdir(p, 0755) == 0);
    path_in(real, "tree/sub", p);
    CHECK(mkdir(p, 0755) == 0);
    path_in(real, "outside", p);
    CHECK(mkdir(p, 0755) == 0);
    path_in(real, "tree/escape", link);
    path_in(real, "outside", p);
    CHECK(symlink(p, link) == 0);

    /* a symlink out of the tree is decided where it points */
    path_in(real, "outside/f", want);
    path_in(real, "tree/escape/f", p);
    CHECK(canon_is(p, want));
    /* "..", ".", "//" */
    path_in(real, "tree/sub/../../outside/./g", p);
    path_in(real, "outside/g", want);
    CHECK(canon_is(p, want));
    path_in(real, "/tree///sub", p); /* real + "//tree///sub" */
    path_in(real, "tree/sub", want);
    CHECK(canon_is(p, want));
    /* not there yet: decided by the canonical parent, the rest lexically */
    path_in(real, "tree/escape/new/deeper/../file", p);
    path_in(real, "outside/new/file", want);
    CHECK(canon_is(p, want));
    CHECK(canon_is("/", "/"));
    CHECK(canon_is("/nonexistent-gate-test/..", "/"));
    char out[PATH_MAX];
    CHECK(gate_canon("relative", out, sizeof(out)) < 0);
    path_in(real, "tree", p);
    /* the kernel's "..": escape/.. is outside's parent, not tree */
    CHECK(gate_canon_at(p, "escape/../sub", out, sizeof(out)) == 0);
    path_in(real, "sub", want);
    CHECK(strcmp(out, want) == 0);
}

static void test_hardlink(const char *dir)
{
    char real[PATH_MAX], locked_dir[PATH_MAX], secret[PATH_MAX], alias[PATH_MAX], other[PATH_MAX],
        out[PATH_MAX];
    struct gate_list roots = {0};
    FILE *f;

    CHECK(realpath(dir, real) != NULL);
    path_in(real, "locked", locked_dir);
    mkdir(locked_dir, 0700);
    path_in(real, "locked/id_rsa", secret);
    f = fopen(secret, "w");
    fputs("key", f);
    fclose(f);
    path_in(real, "innocent", alias);
    CHECK(link(secret, alias) == 0);
    path_in(real, "plain", other);
    f = fopen(other, "w");
    fclose(f);
    gate_list_add(&roots, locked_dir);
    CHECK(gate_hardlink_alias(alias, &roots, out, sizeof(out)) == 1 && strcmp(out, secret) == 0);
    CHECK(gate_hardlink_alias(other, &roots, out, sizeof(out)) == 0);
    gate_list_free(&roots);
}

static int has_path(const struct gate_argv *a, const char *p)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->paths[i], p) == 0)
            return 1;
    return 0;
}

static void test_argv(const char *dir)
{
    char real[PATH_MAX], home[PATH_MAX], key[PATH_MAX], cwdfile[PATH_MAX];
    char *argv[] = {"/bin/bash", "-l", "-c", "cat ~/.ssh/id_rsa 2>/dev/null; wc -l x.txt", NULL};
    char *argv2[] = {"cp", "--target=$HOME/.aws", "y", NULL};
    struct gate_argv a;

    CHECK(realpath(dir, real) != NULL);
    path_in(real, "h", home);
    path_in(real, "h/.ssh/id_rsa", key);
    path_in(real, "x.txt", cwdfile);
    FILE *f = fopen(cwdfile, "w");
    fclose(f);
    CHECK(gate_argv_collect(argv, real, home, &a) == 0);
    CHECK(strcmp(a.command, "/bin/bash -l -c cat ~/.ssh/id_rsa 2>/dev/null; wc -l x.txt") == 0);
    CHECK(has_path(&a, key));     /* ~ expanded inside the -c script */
    CHECK(has_path(&a, cwdfile)); /* an existing plain word, from cwd */
    CHECK(!has_path(&a, "/dev/null"));
    for (size_t i = 0; i < a.n; i++)
        CHECK(strstr(a.paths[i], "/cat") == NULL); /* not a file here */
    gate_argv_free(&a);
    CHECK(gate_argv_collect(argv2, real, home, &a) == 0);
    path_in(real, "h/.aws", key);
    CHECK(has_path(&a, key)); /* an option's value after '=' */
    gate_argv_free(&a);
}

/* A symlink planted after the decision cannot redirect gate_open. */
static void test_open(const char *dir)
{
    char real[PATH_MAX], file[PATH_MAX], link_dir[PATH_MAX], via_link[PATH_MAX];
    int fd;

    CHECK(realpath(dir, real) != NULL);
    path_in(real, "open-target", file);
    close(open(file, O_WRONLY | O_CREAT, 0600));
    path_in(real, "open-link", link_dir);
    CHECK(symlink(real, link_dir) == 0);
    path_in(real, "open-link/open-target", via_link);
    gate_cfg.on = 1;
    fd = gate_open(file, O_RDONLY, 0);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    errno = 0;
    CHECK(gate_open(via_link, O_RDONLY, 0) < 0 && errno == EACCES);
    gate_cfg.on = 0; /* off: a plain open, symlinks followed as before */
    fd = gate_open(via_link, O_RDONLY, 0);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
}

void test_gate(int *total_passed, int *total_failed)
{
    char dir[] = "/tmp/unit-gate-XXXXXX";

    test_file_rows();
    test_exec_rows();
    if (mkdtemp(dir) == NULL) {
        CHECK(!"mkdtemp");
    } else {
        test_grant_lifetimes(dir);
        test_rules_file(dir);
        test_canon(dir);
        test_hardlink(dir);
        test_argv(dir);
        test_open(dir);
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
    }
    *total_passed += passed;
    *total_failed += failed;
}
