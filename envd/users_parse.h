/* The passwd and group files' text parsed (users.c reads and caches the
 * files). Pure; tests/envd/unit_users.c checks each rule. */
#ifndef ENVD_USERS_PARSE_H
#define ENVD_USERS_PARSE_H

#include "users.h"

#include <stddef.h>

/* The passwd line of u->name (7 fields or more): its uid, gid and home ("/"
 * when empty) into u. 1 found, 0 not. */
int users_parse_passwd(const char *text, struct envd_user *u);

/* Appends to u->groups (up to USERS_MAX_GROUPS) the gid of every group line
 * (4 fields or more) whose members list u->name, its primary group aside. */
void users_parse_groups(const char *text, struct envd_user *u);

/* The name (field 0) of the first line whose field (0..7; 2: a uid in passwd, a
 * gid in group) is id, into out. 1 found, 0 not. */
int users_parse_id_name(const char *text, int field, unsigned long id, char *out, size_t outsz);

#endif
