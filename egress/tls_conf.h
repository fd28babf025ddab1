/* tls_conf.h: what interception needs, loaded once per configuration: the
 * CA that signs leaf certificates, one P-256 key for every leaf, the server
 * context clients handshake with, the client context that verifies real
 * servers against `roots`, and the bounded cache of leaves per host. */
#ifndef CORRAL_EGRESS_TLS_CONF_H
#define CORRAL_EGRESS_TLS_CONF_H

#include "settings.h"

#include <openssl/ssl.h>
#include <pthread.h>
#include <time.h>

#define LEAF_CACHE_MAX 256

struct leaf_entry {
    char host[HOSTNAME_MAX + 1];
    X509 *cert;
    time_t made;
};

struct tls_conf {
    SSL_CTX *server, *client;
    X509 *ca;
    EVP_PKEY *ca_key, *leaf_key;
    pthread_mutex_t lock; /* the cache */
    struct leaf_entry cache[LEAF_CACHE_MAX];
};

/* NULL with err (naming a file, never its content) when a file cannot be
 * read or the key does not match the certificate. */
struct tls_conf *tls_conf_load(const struct settings *s, char *err, size_t errlen);
void tls_conf_free(struct tls_conf *t);

/* A leaf for host (a name or an IP literal), referenced for the caller
 * (X509_free it), from the cache or signed now; NULL on failure. */
X509 *tls_leaf(struct tls_conf *t, const char *host);

#endif
