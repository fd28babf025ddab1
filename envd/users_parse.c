/*
 * Lines are split in a copy (the cached text is shared between threads),
 * and a line longer than the copy is skipped. Numbers are read with
 * strtoul as the C library's own parsers read them.
 */
#include "users_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELDS_MAX 8 /* passwd has 7 */

/* Splits one line into up to max ':'-separated fields (in a copy). */
static int split_fields(const char *line, size_t len, char *copy, size_t copysz, char **fields,
                        int max)
{
    int n = 0;

    if (len >= copysz)
        return 0;
    memcpy(copy, line, len);
    copy[len] = '\0';
    fields[n++] = copy;
    for (char *p = copy; *p != '\0' && n < max; p++) {
        if (*p == ':') {
            *p = '\0';
            fields[n++] = p + 1;
        }
    }
    return n;
}

/* Calls fn for every line of text with its fields; stops when fn returns nonzero. */
static int db_scan(const char *text, int want, int (*fn)(char **f, void *arg), void *arg)
{
    char copy[4096];
    char *fields[FIELDS_MAX];

    for (const char *p = text; p != NULL && *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 0 && p[0] != '#' &&
            split_fields(p, len, copy, sizeof(copy), fields, FIELDS_MAX) >= want && fn(fields, arg))
            return 1;
        p = nl ? nl + 1 : NULL;
    }
    return 0;
}

static int match_passwd_name(char **f, void *arg)
{
    struct envd_user *u = arg;

    if (strcmp(f[0], u->name) != 0)
        return 0;
    u->uid = (uid_t)strtoul(f[2], NULL, 10);
    u->gid = (gid_t)strtoul(f[3], NULL, 10);
    snprintf(u->home, sizeof(u->home), "%s", f[5][0] ? f[5] : "/");
    return 1;
}

static int member_of(const char *members, const char *name)
{
    size_t nlen = strlen(name);

    for (const char *p = members; p != NULL && *p != '\0';) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == nlen && strncmp(p, name, len) == 0)
            return 1;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int collect_group(char **f, void *arg)
{
    struct envd_user *u = arg;
    gid_t gid = (gid_t)strtoul(f[2], NULL, 10);

    if (gid != u->gid && u->ngroups < USERS_MAX_GROUPS && member_of(f[3], u->name))
        u->groups[u->ngroups++] = gid;
    return 0;
}

struct id_query {
    unsigned long id;
    int field;
    char *out;
    size_t outsz;
};

static int match_id(char **f, void *arg)
{
    struct id_query *q = arg;

    if (strtoul(f[q->field], NULL, 10) != q->id)
        return 0;
    snprintf(q->out, q->outsz, "%s", f[0]);
    return 1;
}

int users_parse_passwd(const char *text, struct envd_user *u)
{
    return db_scan(text, 7, match_passwd_name, u);
}

void users_parse_groups(const char *text, struct envd_user *u)
{
    db_scan(text, 4, collect_group, u);
}

int users_parse_id_name(const char *text, int field, unsigned long id, char *out, size_t outsz)
{
    struct id_query q = {id, field, out, outsz};

    if (field < 0 || field >= FIELDS_MAX)
        return 0;
    return db_scan(text, field + 1, match_id, &q);
}
