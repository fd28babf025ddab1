/* net_env.h: environment changes workerd leaves for envd's next start.
 *
 * A sandbox's environment is its container's, fixed when the container was
 * made. When a sandbox paused without its memory gets an egress policy added
 * or removed before it resumes (decision 0074), its network changes and the
 * proxy variables (HTTP_PROXY, ...) must change with it, which a container's
 * environment cannot. So workerd writes a file into the stopped container
 * (its path is envd's -net-env flag) and envd applies it at start, before
 * anything runs: a line NAME=VALUE sets NAME, a line NAME alone unsets it.
 * No file: nothing to apply. The sandbox (root inside) can write the file
 * too, so envd applies only the variables the file is for (NET_ENV_NAMES):
 * never one that would change what envd itself does (its resolver's, its
 * locale's, ...), only what its processes are told of the proxy. */
#ifndef ENVD_NET_ENV_H
#define ENVD_NET_ENV_H

#include <stddef.h>

/* The variables the file may set or unset: the proxy ones workerd gives a
 * sandbox with an egress policy (sandbox_proxy_env, sandbox_body.h; a unit
 * test holds the two together). An initializer, NULL-terminated. */
#define NET_ENV_NAMES                                                                              \
    {                                                                                              \
        "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy",          \
            "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", NULL                     \
    }

/* One line (without its newline): 1 set (name, *value), 0 unset (name), -1
 * not a line to apply (blank, or a name outside [A-Za-z_][A-Za-z0-9_]*).
 * Pure. */
int net_env_line(const char *line, char *name, size_t namesz, const char **value);

/* Applies the file at path to envd's environment, its lines naming one of
 * names (NULL-terminated; envd's: NET_ENV_NAMES) and no other. 0 (also when
 * absent), -1 when it exists and cannot be read. */
int net_env_apply(const char *path, const char *const names[]);

#endif
