/* What a command start touches, as far as its argv shows it: the gate decides on these. */
#ifndef ENVD_GATE_ARGV_H
#define ENVD_GATE_ARGV_H

#include <stddef.h>

struct gate_argv {
    char *command; /* argv joined with spaces */
    char **paths;  /* canonical paths named by the arguments */
    size_t n, cap;
};

/*
 * Splits every argument into words (a shell's -c script included: "cat
 * ~/.ssh/id_rsa" names ~/.ssh/id_rsa), expands a leading ~ or $HOME to home,
 * and keeps, canonicalised from cwd, each word that names an existing path
 * or holds a '/'. Device nodes under /dev (2>/dev/null) are left out.
 * -1 when out of memory or there are too many.
 */
int gate_argv_collect(char *const *argv, const char *cwd, const char *home, struct gate_argv *out);
void gate_argv_free(struct gate_argv *a);

#endif
