/*
 * A best effort, not a boundary: a shell script can build a path the gate
 * never sees ($(printf ...), quotes, variables). It catches the plain cases
 * an agent writes; -os-sandbox bwrap is what makes the kernel say no.
 */
#include "gate_argv.h"
#include "gate_canon.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_PATHS 4096
#define WORD_SEPARATORS " \t\n;|&<>()`'\"="

static int add_path(struct gate_argv *a, const char *canon)
{
    if (strncmp(canon, "/dev/", 5) == 0)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->paths[i], canon) == 0)
            return 0;
    if (a->n == MAX_PATHS)
        return -1;
    if (a->n == a->cap) {
        size_t ncap = a->cap ? a->cap * 2 : 16;
        char **nv = realloc(a->paths, ncap * sizeof(*nv));
        if (nv == NULL)
            return -1;
        a->paths = nv;
        a->cap = ncap;
    }
    a->paths[a->n] = strdup(canon);
    if (a->paths[a->n] == NULL)
        return -1;
    a->n++;
    return 0;
}

/* ~/x, ~, $HOME/x, ${HOME}/x with home put in; else the word as it is. */
static void expand_home(const char *word, const char *home, char *out, size_t outsz)
{
    static const char *const forms[] = {"~", "${HOME}", "$HOME"};

    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        size_t n = strlen(forms[i]);
        if (strncmp(word, forms[i], n) == 0 && (word[n] == '\0' || word[n] == '/')) {
            snprintf(out, outsz, "%s%s", home, word + n);
            return;
        }
    }
    snprintf(out, outsz, "%s", word);
}

static int consider_word(struct gate_argv *a, const char *word, const char *cwd, const char *home)
{
    char expanded[PATH_MAX], canon[PATH_MAX];
    struct stat st;

    expand_home(word, home, expanded, sizeof(expanded));
    if (gate_canon_at(cwd, expanded, canon, sizeof(canon)) < 0)
        return 0; /* too long to name anything */
    if (strchr(expanded, '/') == NULL && stat(canon, &st) < 0)
        return 0; /* a plain word that is no file here */
    return add_path(a, canon);
}

static int scan_arg(struct gate_argv *a, const char *arg, const char *cwd, const char *home)
{
    char *copy = strdup(arg), *save = NULL;
    int rc = 0;

    if (copy == NULL)
        return -1;
    for (char *w = strtok_r(copy, WORD_SEPARATORS, &save); w != NULL && rc == 0;
         w = strtok_r(NULL, WORD_SEPARATORS, &save))
        rc = consider_word(a, w, cwd, home);
    free(copy);
    return rc;
}

static char *join(char *const *argv)
{
    size_t len = 1;
    char *out, *o;

    for (char *const *p = argv; *p != NULL; p++)
        len += strlen(*p) + 1;
    out = malloc(len);
    if (out == NULL)
        return NULL;
    o = out;
    for (char *const *p = argv; *p != NULL; p++) {
        size_t n = strlen(*p);
        if (p != argv)
            *o++ = ' ';
        memcpy(o, *p, n);
        o += n;
    }
    *o = '\0';
    return out;
}

int gate_argv_collect(char *const *argv, const char *cwd, const char *home, struct gate_argv *out)
{
    memset(out, 0, sizeof(*out));
    out->command = join(argv);
    if (out->command == NULL)
        return -1;
    for (char *const *p = argv + 1; *p != NULL; p++)
        if (scan_arg(out, *p, cwd, home) < 0)
            return -1;
    return 0;
}

void gate_argv_free(struct gate_argv *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->paths[i]);
    free(a->paths);
    free(a->command);
    memset(a, 0, sizeof(*a));
}
