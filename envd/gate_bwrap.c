/*
 * Mount order matters: bwrap applies its options in order, so the hidden
 * paths come after the work tree's bind (a hardlocked file inside the work
 * tree stays hidden), parents before children, and the hiding tmpfs mounts
 * are made read-only last, once every mount point below them exists.
 */
#include "gate_bwrap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int push(struct gate_argvec *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        size_t ncap = a->cap ? a->cap * 2 : 64;
        char **nv = realloc(a->v, ncap * sizeof(*nv));
        if (nv == NULL)
            return -1;
        a->v = nv;
        a->cap = ncap;
    }
    a->v[a->n] = strdup(s);
    if (a->v[a->n] == NULL)
        return -1;
    a->v[++a->n] = NULL;
    return 0;
}

static int push3(struct gate_argvec *a, const char *x, const char *y, const char *z)
{
    return push(a, x) < 0 || push(a, y) < 0 || (z != NULL && push(a, z) < 0) ? -1 : 0;
}

static int by_length(const void *x, const void *y)
{
    size_t a = strlen(*(char *const *)x), b = strlen(*(char *const *)y);
    return a < b ? -1 : a > b;
}

/* Covers each existing hidden path; directories are remounted read-only at the end. */
static int hide(struct gate_argvec *a, char *const *hidden, size_t n)
{
    char **sorted = malloc((n ? n : 1) * sizeof(*sorted));
    int *is_dir = calloc(n ? n : 1, sizeof(*is_dir));
    int rc = sorted && is_dir ? 0 : -1;
    struct stat st;

    if (rc == 0 && n > 0) {
        memcpy(sorted, hidden, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), by_length);
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (lstat(sorted[i], &st) < 0)
            continue; /* nothing to hide yet; the gate still denies creating it */
        is_dir[i] = S_ISDIR(st.st_mode);
        rc = is_dir[i] ? push3(a, "--tmpfs", sorted[i], NULL)
                       : push3(a, "--ro-bind", "/dev/null", sorted[i]);
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        if (is_dir[i])
            rc = push3(a, "--remount-ro", sorted[i], NULL);
    free(sorted);
    free(is_dir);
    return rc;
}

int gate_bwrap_argv(const char *bwrap_path, const char *work_tree, char *const *hidden,
                    size_t nhidden, char *const *argv, const char *exe, const char *cwd,
                    struct gate_argvec *out)
{
    memset(out, 0, sizeof(*out));
    if (push(out, bwrap_path) < 0 || push3(out, "--ro-bind", "/", "/") < 0 ||
        push3(out, "--dev", "/dev", NULL) < 0 || push3(out, "--proc", "/proc", NULL) < 0 ||
        push3(out, "--tmpfs", "/tmp", NULL) < 0 ||
        (work_tree != NULL && push3(out, "--bind", work_tree, work_tree) < 0) ||
        hide(out, hidden, nhidden) < 0 || push3(out, "--chdir", cwd, NULL) < 0 ||
        push3(out, "--", exe, NULL) < 0)
        return -1;
    for (char *const *p = argv + 1; *p != NULL; p++)
        if (push(out, *p) < 0)
            return -1;
    return 0;
}

void gate_argvec_free(struct gate_argvec *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof(*a));
}
