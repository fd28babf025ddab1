/*
 * The gate's fixed state, built once before envd serves: the hardlocks (the
 * credential files of the invoking user's home, every -hardlock, the gate dir
 * and the policy file, so an agent can neither read the grants nor edit its
 * own rules), the policy's denials and the work tree.
 */
#include "gate_start.h"
#include "envd.h"
#include "gate_canon.h"
#include "gate_rules.h"
#include "users.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Relative to the home directory: credentials an agent has no business reading. */
static const char *const home_hardlocks[] = {
    ".ssh",   ".aws",   ".config/gcloud",   ".azure",          ".kube", ".docker/config.json",
    ".gnupg", ".netrc", ".git-credentials", ".password-store",
};

static int add_canonical(struct gate_list *l, const char *path)
{
    char canon[PATH_MAX];

    if (gate_canon(path, canon, sizeof(canon)) < 0) {
        fprintf(stderr, "envd: gate: cannot canonicalise %s: %s\n", path, strerror(errno));
        return -1;
    }
    return gate_list_add(l, canon);
}

static int add_home(struct gate_list *l, const char *home)
{
    char path[PATH_MAX];

    if (home == NULL || home[0] != '/')
        return 0;
    for (size_t i = 0; i < sizeof(home_hardlocks) / sizeof(home_hardlocks[0]); i++) {
        if (snprintf(path, sizeof(path), "%s/%s", home, home_hardlocks[i]) >= (int)sizeof(path) ||
            add_canonical(l, path) < 0)
            return -1;
    }
    return 0;
}

/* The invoking user's home as $HOME says and as the passwd file says: both, when they differ. */
static int add_homes(struct gate_list *l, char *first_home, size_t sz)
{
    struct envd_user u;
    char name[64];
    const char *env_home = getenv("HOME");

    users_uid_name(geteuid(), name, sizeof(name));
    int have_pw = users_lookup(name, &u) == 0;
    snprintf(first_home, sz, "%s",
             env_home && env_home[0] == '/' ? env_home
             : have_pw                      ? u.home
                                            : "/");
    if (add_home(l, env_home) < 0)
        return -1;
    return have_pw ? add_home(l, u.home) : 0;
}

static int open_gate_dir(struct gate_files *f, const char *home)
{
    char dir[PATH_MAX];

    if (gate_cfg.gate_dir[0] == '\0' &&
        snprintf(gate_cfg.gate_dir, sizeof(gate_cfg.gate_dir), "%.*s/.corral-gate",
                 (int)(sizeof(gate_cfg.gate_dir) - 16), home) < 0)
        return -1;
    if (mkdir(gate_cfg.gate_dir, 0700) < 0 && errno != EEXIST) {
        fprintf(stderr, "envd: -gate-dir %s: %s\n", gate_cfg.gate_dir, strerror(errno));
        return -1;
    }
    if (realpath(gate_cfg.gate_dir, dir) == NULL ||
        snprintf(f->grants, sizeof(f->grants), "%s/grants", dir) >= (int)sizeof(f->grants) ||
        snprintf(f->ask_lock, sizeof(f->ask_lock), "%s/ask.lock", dir) >=
            (int)sizeof(f->ask_lock) ||
        snprintf(f->audit, sizeof(f->audit), "%s/audit.jsonl", dir) >= (int)sizeof(f->audit)) {
        fprintf(stderr, "envd: -gate-dir %s: unusable\n", gate_cfg.gate_dir);
        return -1;
    }
    snprintf(gate_cfg.gate_dir, sizeof(gate_cfg.gate_dir), "%s", dir);
    return 0;
}

static int load_policy(struct gate_state *s)
{
    static const struct gate_rule_verbs deny = {"deny", "deny-command"};
    char msg[PATH_MAX + 128];

    if (gate_cfg.policy[0] == '\0')
        return 0;
    if (gate_rules_load(gate_cfg.policy, &deny, 0, &s->deny_paths, &s->deny_cmds, msg,
                        sizeof(msg)) < 0) {
        fprintf(stderr, "envd: -policy: %s\n", msg);
        return -1;
    }
    return add_canonical(&s->hardlocks, gate_cfg.policy);
}

static int set_work_tree(struct gate_state *s, char *buf)
{
    if (gate_cfg.work_tree[0] == '\0')
        return 0; /* no work tree: everything is granted or asked */
    if (realpath(gate_cfg.work_tree, buf) == NULL) {
        fprintf(stderr, "envd: -work-tree %s: %s\n", gate_cfg.work_tree, strerror(errno));
        return -1;
    }
    s->work_tree = buf;
    return 0;
}

int gate_state_build(struct gate_state *s, struct gate_files *f)
{
    static char work_tree[PATH_MAX];
    char home[PATH_MAX];

    memset(s, 0, sizeof(*s));
    s->strict = gate_cfg.strict;
    if (add_homes(&s->hardlocks, home, sizeof(home)) < 0 || open_gate_dir(f, home) < 0 ||
        add_canonical(&s->hardlocks, gate_cfg.gate_dir) < 0 || load_policy(s) < 0 ||
        set_work_tree(s, work_tree) < 0)
        return -1;
    for (size_t i = 0; i < gate_cfg.hardlock.n; i++)
        if (add_canonical(&s->hardlocks, gate_cfg.hardlock.v[i]) < 0)
            return -1;
    if (gate_cfg.sandbox_id[0] == '\0' && gethostname(gate_cfg.sandbox_id, 64) < 0)
        snprintf(gate_cfg.sandbox_id, sizeof(gate_cfg.sandbox_id), "unknown");
    return 0;
}
