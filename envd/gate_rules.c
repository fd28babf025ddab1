/*
 * A line format a person can read and edit: the verb, one space, the value to
 * the end of the line (so paths and commands may hold spaces).
 */
#include "gate_rules.h"
#include "gate_canon.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int add_path(struct gate_list *paths, const char *value)
{
    char canon[PATH_MAX];

    if (value[0] != '/' || gate_canon(value, canon, sizeof(canon)) < 0)
        return -1;
    return gate_list_add(paths, canon);
}

/* One line (newline stripped). 0 ok, -1 bad. */
static int parse_line(char *line, const struct gate_rule_verbs *verbs, struct gate_list *paths,
                      struct gate_list *cmds)
{
    char *sp;

    while (*line == ' ' || *line == '\t')
        line++;
    if (*line == '\0' || *line == '#')
        return 0;
    sp = strchr(line, ' ');
    if (sp == NULL || sp[1] == '\0')
        return -1;
    *sp = '\0';
    if (strcmp(line, verbs->path_verb) == 0)
        return add_path(paths, sp + 1);
    if (strcmp(line, verbs->cmd_verb) == 0)
        return gate_list_add(cmds, sp + 1);
    return -1;
}

int gate_rules_load(const char *file, const struct gate_rule_verbs *verbs, int missing_ok,
                    struct gate_list *paths, struct gate_list *cmds, char *msg, size_t msgsz)
{
    FILE *f = fopen(file, "re");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0, rc = 0;

    if (f == NULL) {
        if (errno == ENOENT && missing_ok)
            return 0;
        snprintf(msg, msgsz, "%s: %s", file, strerror(errno));
        return -1;
    }
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (n > 0 && line[n - 1] == '\n')
            line[n - 1] = '\0';
        if (parse_line(line, verbs, paths, cmds) < 0) {
            snprintf(msg, msgsz, "%s:%d: expected '%s <absolute path>' or '%s <pattern>'", file,
                     lineno, verbs->path_verb, verbs->cmd_verb);
            rc = -1;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

int gate_rules_append(const char *file, const char *verb, const char *value)
{
    char *line;
    int fd, len, rc;

    if (strchr(value, '\n') != NULL)
        return -1;
    len = asprintf(&line, "%s %s\n", verb, value);
    if (len < 0)
        return -1;
    fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    rc = fd >= 0 && write(fd, line, (size_t)len) == len ? 0 : -1;
    if (fd >= 0)
        close(fd);
    free(line);
    return rc;
}

char *gate_rules_literal_pattern(const char *command)
{
    char *out = malloc(strlen(command) * 2 + 1), *o = out;

    if (out == NULL)
        return NULL;
    for (const char *c = command; *c != '\0'; c++) {
        if (strchr("*?[]\\", *c) != NULL)
            *o++ = '\\';
        *o++ = *c;
    }
    *o = '\0';
    return out;
}
