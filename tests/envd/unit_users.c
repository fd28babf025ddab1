/* Table tests of the passwd and group files' text (envd/users_parse.c):
 * a user's uid, gid and home by exact name, comments and short or overlong
 * lines skipped, supplementary groups by membership (at most
 * USERS_MAX_GROUPS), names by id. Linked into unit-envd (see unit_envd.c's
 * main). */
#include "check.h"
#include "users_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CHECK_COUNTERS;

void test_users(int *total_passed, int *total_failed);

static const char passwd[] = "root:x:0:0:root:/root:/bin/bash\n"
                             "#hidden:x:5:5::/h:/bin/sh\n"
                             "\n"
                             "us:x:1003:1003::/home/us:/bin/sh\n"
                             "user:x:1000:1000::/home/user:/bin/sh\n"
                             "short:x:1001:1001\n"
                             "nohome:x:1002:1002:::/bin/sh\n"
                             "user:x:2000:2000::/second:/bin/sh\n"
                             "last:x:7:8::/l:/bin/sh"; /* no final newline */

struct passwd_row {
    const char *name;
    int found;
    unsigned uid, gid;
    const char *home;
};

static const struct passwd_row passwd_rows[] = {
    {"root", 1, 0, 0, "/root"},
    {"user", 1, 1000, 1000, "/home/user"}, /* the first line of a name counts */
    {"us", 1, 1003, 1003, "/home/us"},     /* whole names, not prefixes */
    {"use", 0, 0, 0, ""},
    {"nohome", 1, 1002, 1002, "/"},
    {"last", 1, 7, 8, "/l"},
    {"short", 0, 0, 0, ""}, /* fewer than 7 fields */
    {"#hidden", 0, 0, 0, ""},
    {"nobody", 0, 0, 0, ""},
    {"", 0, 0, 0, ""},
};

static void test_passwd(void)
{
    for (size_t i = 0; i < sizeof(passwd_rows) / sizeof(passwd_rows[0]); i++) {
        const struct passwd_row *r = &passwd_rows[i];
        struct envd_user u = {0};
        int found;
        snprintf(u.name, sizeof(u.name), "%s", r->name);
        found = users_parse_passwd(passwd, &u);
        int ok =
            found == r->found && u.uid == r->uid && u.gid == r->gid && !strcmp(u.home, r->home);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  passwd %s: %d %u %u %s\n", r->name, found, u.uid, u.gid, u.home);
    }
}

/* A line longer than the 4 KiB copy is skipped; the lines after it count. */
static void test_long_line(void)
{
    size_t n = 5000 + sizeof(passwd);
    char *text = malloc(n);
    struct envd_user u = {.name = "long"};

    if (text == NULL) {
        CHECK(!"malloc");
        return;
    }
    memset(text, 'x', 5000);
    memcpy(text, "long:x:9:9::/long:", 18);
    text[4999] = '\n';
    memcpy(text + 5000, passwd, sizeof(passwd));
    CHECK(users_parse_passwd(text, &u) == 0);
    snprintf(u.name, sizeof(u.name), "user");
    CHECK(users_parse_passwd(text, &u) == 1 && u.uid == 1000);
    free(text);
}

static const char group[] = "root:x:0:\n"
                            "users:x:100:user,other\n"
                            "docker:x:999:other,user\n"
                            "user:x:1000:user\n" /* the primary group: already there */
                            "wheel:x:10:username,use\n"
                            "staff:x:50\n" /* three fields */
                            "#adm:x:4:user\n"
                            "last:x:7:user";

static void test_groups(void)
{
    struct envd_user u = {.name = "user", .gid = 1000, .groups = {1000}, .ngroups = 1};
    char *many;
    size_t o = 0;

    users_parse_groups(group, &u);
    CHECK(u.ngroups == 4 && u.groups[0] == 1000 && u.groups[1] == 100 && u.groups[2] == 999 &&
          u.groups[3] == 7);
    /* more groups than USERS_MAX_GROUPS: the first ones */
    many = malloc(100 * 32);
    if (many == NULL) {
        CHECK(!"malloc");
        return;
    }
    for (int i = 0; i < 100; i++)
        o += (size_t)snprintf(many + o, 32, "g%d:x:%d:a,user\n", i, 2000 + i);
    u.ngroups = 1;
    users_parse_groups(many, &u);
    CHECK(u.ngroups == USERS_MAX_GROUPS && u.groups[1] == 2000 &&
          u.groups[USERS_MAX_GROUPS - 1] == 2000 + USERS_MAX_GROUPS - 2);
    free(many);
}

static int id_name_is(const char *text, unsigned long id, const char *want)
{
    char out[16] = "unset";
    int found = users_parse_id_name(text, 2, id, out, sizeof(out));

    return want ? found == 1 && strcmp(out, want) == 0 : found == 0 && !strcmp(out, "unset");
}

static void test_id_names(void)
{
    CHECK(id_name_is(passwd, 0, "root") && id_name_is(passwd, 1000, "user"));
    CHECK(id_name_is(passwd, 1001, "short") && id_name_is(passwd, 7, "last"));
    CHECK(id_name_is(passwd, 5, NULL) && id_name_is(passwd, 4242, NULL));
    /* a name by id needs the id's field only: three fields will do */
    CHECK(id_name_is(group, 999, "docker") && id_name_is(group, 50, "staff"));
    CHECK(id_name_is("a:x\nb:x:3", 3, "b") && id_name_is("a:x\n", 0, NULL));
    CHECK(id_name_is("", 0, NULL));
}

void test_users(int *total_passed, int *total_failed)
{
    test_passwd();
    test_long_line();
    test_groups();
    test_id_names();
    *total_passed += passed;
    *total_failed += failed;
}
