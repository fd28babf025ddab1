/* tls_conf.c: ALPN offers and accepts only http/1.1 on both sides: the relay
 * rewrites HTTP/1.1 request heads, and a client that spoke h2 through it
 * would be unreadable. TLS 1.2 is the floor on both sides. */
#include "tls_conf.h"

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char alpn_h1[] = "\x08http/1.1";

static int fail(char *err, size_t errlen, const char *what, const char *path)
{
    snprintf(err, errlen, "%s: cannot use %.200s", what, path);
    ERR_clear_error();
    return -1;
}

static int select_h1(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                     const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl;
    (void)arg;
    if (SSL_select_next_proto((unsigned char **)out, outlen, alpn_h1, sizeof(alpn_h1) - 1, in,
                              inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK; /* no ALPN: HTTP/1.1 by default */
    return SSL_TLSEXT_ERR_OK;
}

static SSL_CTX *server_ctx(void)
{
    SSL_CTX *c = SSL_CTX_new(TLS_server_method());
    if (!c)
        return NULL;
    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
    SSL_CTX_set_alpn_select_cb(c, select_h1, NULL);
    SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* A peer that closes without close_notify ends its side, as over TCP:
     * HTTP frames its own messages. */
    SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    return c;
}

static SSL_CTX *client_ctx(const char *roots)
{
    SSL_CTX *c = SSL_CTX_new(TLS_client_method());
    if (!c)
        return NULL;
    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
    SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_alpn_protos(c, alpn_h1, sizeof(alpn_h1) - 1);
    SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (SSL_CTX_load_verify_locations(c, roots, NULL) != 1) {
        SSL_CTX_free(c);
        return NULL;
    }
    return c;
}

static int load_ca(struct tls_conf *t, const struct settings *s, char *err, size_t errlen)
{
    FILE *f = fopen(s->ca_cert, "r");
    if (!f || !(t->ca = PEM_read_X509(f, NULL, NULL, NULL))) {
        if (f)
            fclose(f);
        return fail(err, errlen, "ca_cert", s->ca_cert);
    }
    fclose(f);
    if (!(f = fopen(s->ca_key, "r")) || !(t->ca_key = PEM_read_PrivateKey(f, NULL, NULL, NULL))) {
        if (f)
            fclose(f);
        return fail(err, errlen, "ca_key", s->ca_key);
    }
    fclose(f);
    if (X509_check_private_key(t->ca, t->ca_key) != 1)
        return fail(err, errlen, "ca_key: does not match ca_cert", s->ca_key);
    return 0;
}

struct tls_conf *tls_conf_load(const struct settings *s, char *err, size_t errlen)
{
    struct tls_conf *t = calloc(1, sizeof(*t));

    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    if (load_ca(t, s, err, errlen) != 0)
        goto bad;
    if (!(t->client = client_ctx(s->roots))) {
        fail(err, errlen, "roots", s->roots);
        goto bad;
    }
    t->server = server_ctx();
    t->leaf_key = EVP_EC_gen("P-256");
    if (!t->server || !t->leaf_key) {
        snprintf(err, errlen, "cannot set up TLS");
        goto bad;
    }
    return t;
bad:
    tls_conf_free(t);
    return NULL;
}

void tls_conf_free(struct tls_conf *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < LEAF_CACHE_MAX; i++)
        X509_free(t->cache[i].cert);
    SSL_CTX_free(t->server);
    SSL_CTX_free(t->client);
    X509_free(t->ca);
    EVP_PKEY_free(t->ca_key);
    EVP_PKEY_free(t->leaf_key);
    pthread_mutex_destroy(&t->lock);
    free(t);
}
