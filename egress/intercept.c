/* intercept.c: the server's handshake comes first, so a server that fails
 * verification is dropped before the client's first request exists: no
 * request byte ever reaches it. The client's handshake follows either way,
 * so the refusal can be told to the client in HTTP, on its decrypted
 * stream, naming the verification failure. */
#include "intercept.h"

#include "io.h"
#include "reply.h"
#include "tls_io.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <sys/socket.h>

#define HANDSHAKE_MS 10000
#define WRITE_MS 30000

/* The server side, handshaken and verified, or NULL with why. */
static SSL *server_side(const struct icpt *ic, char *why, size_t whylen)
{
    SSL *s = SSL_new(ic->live->tls->client);
    int ok = s && SSL_set_fd(s, ic->up);

    if (ok)
        SSL_set_connect_state(s);
    if (ok && ic->literal)
        ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), ic->host);
    else if (ok)
        ok = SSL_set_tlsext_host_name(s, ic->host) && SSL_set1_host(s, ic->host);
    if (ok && tls_handshake(s, ic->up, io_now_ms() + HANDSHAKE_MS) == 0)
        return s;
    long v = s ? SSL_get_verify_result(s) : X509_V_OK;
    if (v != X509_V_OK)
        snprintf(why, whylen, "certificate verification failed: %s",
                 X509_verify_cert_error_string(v));
    else
        snprintf(why, whylen, "TLS handshake with the server failed");
    ERR_clear_error();
    SSL_free(s);
    return NULL;
}

/* The client side, presenting a leaf for the host; NULL on failure. */
static SSL *client_side(const struct icpt *ic)
{
    X509 *leaf = tls_leaf(ic->live->tls, ic->host);
    SSL *s = leaf ? SSL_new(ic->live->tls->server) : NULL;
    int ok = s && SSL_use_certificate(s, leaf) && SSL_use_PrivateKey(s, ic->live->tls->leaf_key) &&
             SSL_set_fd(s, ic->cli) && (SSL_set_accept_state(s), 1) &&
             tls_handshake(s, ic->cli, io_now_ms() + HANDSHAKE_MS) == 0;

    X509_free(leaf);
    if (ok)
        return s;
    ERR_clear_error();
    SSL_free(s);
    return NULL;
}

void intercept_run(const struct icpt *ic)
{
    static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    char why[256], body[HOSTNAME_MAX + 320];

    if (io_write_all(ic->cli, established, sizeof(established) - 1, io_now_ms() + WRITE_MS) != 0)
        return;
    SSL *srv = server_side(ic, why, sizeof(why));
    SSL *cli = client_side(ic);
    if (!srv) {
        shutdown(ic->up, SHUT_RDWR); /* nothing was sent on it, nothing will be */
        reply_log(ic->live->s.sandbox, false, ic->req, ic->addr, "upstream-tls");
        snprintf(body, sizeof(body), "corral egress: %s: %s", ic->host, why);
        if (cli)
            tls_reply_error(cli, ic->cli, 502, body, io_now_ms() + WRITE_MS);
    } else if (!cli) {
        reply_log(ic->live->s.sandbox, false, ic->req, ic->addr, "client-tls");
    } else {
        tls_relay_run(cli, srv, ic);
    }
    SSL_free(cli);
    SSL_free(srv);
}
