/*
 * Six branches, first match wins: hardlocks, mandatory denials, the work
 * tree, permanent grants, session grants, ask. A hardlock wins over every
 * allow (a hardlocked file inside the work tree stays denied), and an
 * operation that reaches below its path (remove, move, recursive list or
 * watch) is decided by whatever lies below it too: removing the home directory
 * would remove ~/.ssh.
 */
#include "gate_decide.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

int gate_list_add(struct gate_list *l, const char *s)
{
    char *copy;

    if (gate_list_has(l, s))
        return 0;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 8;
        char **nv = realloc(l->v, ncap * sizeof(*nv));
        if (nv == NULL)
            return -1;
        l->v = nv;
        l->cap = ncap;
    }
    copy = strdup(s);
    if (copy == NULL)
        return -1;
    l->v[l->n++] = copy;
    return 0;
}

int gate_list_has(const struct gate_list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 1;
    return 0;
}

void gate_list_free(struct gate_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

int gate_path_under(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);

    if (strcmp(prefix, "/") == 0)
        return path[0] == '/';
    return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* path is inside one of the list's prefixes, or (subtree) one of them is inside path. */
static int path_hits(const struct gate_list *l, const char *path, int subtree)
{
    for (size_t i = 0; i < l->n; i++)
        if (gate_path_under(path, l->v[i]) || (subtree && gate_path_under(l->v[i], path)))
            return 1;
    return 0;
}

static int command_hits(const struct gate_list *l, const char *command)
{
    for (size_t i = 0; i < l->n; i++)
        if (fnmatch(l->v[i], command, 0) == 0)
            return 1;
    return 0;
}

/* Any of the command's paths (executable, cwd, path arguments) inside the list. */
static int exec_paths_hit(const struct gate_list *l, const struct gate_request *q)
{
    if ((q->exe && path_hits(l, q->exe, 0)) || (q->cwd && path_hits(l, q->cwd, 0)))
        return 1;
    for (size_t i = 0; i < q->nargs; i++)
        if (path_hits(l, q->args[i], 0))
            return 1;
    return 0;
}

/* The executable is not part of it: /usr/bin/cat is never in a work tree. */
static int exec_in_work_tree(const char *wt, const struct gate_request *q)
{
    if (wt == NULL || q->cwd == NULL || !gate_path_under(q->cwd, wt))
        return 0;
    for (size_t i = 0; i < q->nargs; i++)
        if (!gate_path_under(q->args[i], wt))
            return 0;
    return 1;
}

static struct gate_verdict verdict(enum gate_branch b, enum gate_answer a)
{
    struct gate_verdict v = {b, a};
    return v;
}

static struct gate_verdict ask(const struct gate_state *s)
{
    return verdict(GB_ASK, s->strict ? GA_DENY : GA_ASK);
}

static struct gate_verdict decide_exec(const struct gate_state *s, const struct gate_request *q)
{
    if (exec_paths_hit(&s->hardlocks, q))
        return verdict(GB_HARDLOCK, GA_DENY);
    if (exec_paths_hit(&s->deny_paths, q) || command_hits(&s->deny_cmds, q->command))
        return verdict(GB_POLICY, GA_DENY);
    if (exec_in_work_tree(s->work_tree, q))
        return verdict(GB_WORKTREE, GA_ALLOW);
    if (command_hits(&s->perm_cmds, q->command))
        return verdict(GB_PERMANENT, GA_ALLOW);
    if (command_hits(&s->sess_cmds, q->command))
        return verdict(GB_SESSION, GA_ALLOW);
    return ask(s);
}

struct gate_verdict gate_decide(const struct gate_state *s, const struct gate_request *q)
{
    if (q->op == GATE_EXEC)
        return decide_exec(s, q);
    if (path_hits(&s->hardlocks, q->path, q->subtree))
        return verdict(GB_HARDLOCK, GA_DENY);
    if (path_hits(&s->deny_paths, q->path, q->subtree))
        return verdict(GB_POLICY, GA_DENY);
    if (s->work_tree != NULL && gate_path_under(q->path, s->work_tree))
        return verdict(GB_WORKTREE, GA_ALLOW);
    if (path_hits(&s->perm_paths, q->path, 0))
        return verdict(GB_PERMANENT, GA_ALLOW);
    if (path_hits(&s->sess_paths, q->path, 0))
        return verdict(GB_SESSION, GA_ALLOW);
    return ask(s);
}

const char *gate_op_name(enum gate_op op)
{
    static const char *const names[] = {"read",   "write", "list",  "stat",
                                        "remove", "move",  "watch", "exec"};
    return names[op];
}

const char *gate_branch_name(enum gate_branch b)
{
    static const char *const names[] = {"hardlock",  "policy",  "worktree",
                                        "permanent", "session", "ask"};
    return names[b];
}
