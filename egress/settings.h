/* settings.h: everything a reload (SIGHUP) may change: the sandbox's policy,
 * header rules and SOCKS5 upstream, and the files interception needs. Read
 * from -policy, or from the -config-file in either of its two forms:
 *
 *   ID\nPOLICY-JSON          (the first form: sandbox id, newline, policy)
 *   {"sandbox": ID, "policy": {...}, "ca_cert": PATH, "ca_key": PATH,
 *    "roots": PATH, "resolver": PATH}
 *
 * The policy object holds "allow", "deny", "rules" (rules.h) and "upstream"
 * ({"address": "host:port", "username": U, "password": P}). Pure: the files
 * named here are read by live.c. Errors never quote a header value or a
 * password. */
#ifndef CORRAL_EGRESS_SETTINGS_H
#define CORRAL_EGRESS_SETTINGS_H

#include "policy.h"
#include "rules.h"

#include <stdbool.h>
#include <stddef.h>

#define SANDBOX_ID_MAX 128
#define SETTINGS_PATH_MAX 255
#define UNIX_PATH_MAX 107 /* sun_path, less its NUL */
#define SOCKS_FIELD_MAX 255
#define DEFAULT_ROOTS "/etc/ssl/certs/ca-certificates.crt"

struct upstream {
    bool set;
    char host[HOSTNAME_MAX + 1]; /* a name (normalized) or an IP literal */
    unsigned port;
    char user[SOCKS_FIELD_MAX + 1]; /* "" : no authentication */
    char pass[SOCKS_FIELD_MAX + 1];
};

struct settings {
    char sandbox[SANDBOX_ID_MAX + 1];
    struct policy policy;
    struct rules rules;
    struct upstream upstream;
    char ca_cert[SETTINGS_PATH_MAX + 1], ca_key[SETTINGS_PATH_MAX + 1];
    char roots[SETTINGS_PATH_MAX + 1];
    char resolver[UNIX_PATH_MAX + 1]; /* "" : placeholders cannot resolve */
};

/* Ids appear in every log line: nothing that could forge one. */
bool settings_sandbox_ok(const char *s);

/* A policy object's text (the -policy flag); s->sandbox is left empty. */
int settings_from_policy(const char *json, struct settings *s, char *err, size_t errlen);

/* A config file's text, either form. 0, or -1 with err. */
int settings_from_file(const char *text, struct settings *s, char *err, size_t errlen);

void settings_free(struct settings *s);

#endif
