/*
 * envd: the in-sandbox agent. Shared configuration and small helpers used by
 * every part of the binary. One process, one thread per connection (see
 * README.md for why), so everything reachable from here is thread-safe.
 */
#ifndef ENVD_H
#define ENVD_H

#include <stddef.h>

/* The envd protocol version Corral implements; the SDK gates features on it. */
#define ENVD_VERSION "0.6.4"

struct envd_config {
    int port;
    char listen_addr[64];
    char *access_token; /* NULL when the sandbox is not secure */
    size_t access_token_len;
    char default_user[64];
    char passwd_path[256];
    char group_path[256];
    int require_signature_expiration; /* signed /files URLs without an expiry are refused */
    int agent; /* -agent: on a person's machine, as the invoking user (never switches) */
    int warm;  /* -warm: nothing served but /health and /init until claimed (init.h) */
    char net_env_path[256]; /* -net-env: changes to the environment applied at start */
};

extern struct envd_config envd_cfg;

void envd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Monotonic milliseconds, for deadlines and keepalive timers. */
long long envd_now_ms(void);

/* The wall clock as RFC 3339 UTC with milliseconds ("2026-01-02T03:04:05.678Z"). */
void envd_utc_now(char *out, size_t outsz);

#endif
