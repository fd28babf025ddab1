/* tls_leaf.c: leaf certificates signed on the fly, one per host, cached in
 * memory (LEAF_CACHE_MAX, the oldest replaced) and signed again once a day;
 * each is valid for a week, from an hour ago (clock skew). Every leaf shares
 * the configuration's one P-256 key: a key pair per host would cost a key
 * generation per new host for no isolation the CA does not already give. */
#include "ipaddr.h"
#include "tls_conf.h"

#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <string.h>

#define LEAF_VALID_S (7 * 24 * 3600)
#define LEAF_REFRESH_S (24 * 3600)
#define LEAF_SKEW_S 3600
#define CN_MAX 64 /* ub-common-name */

static int add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
    int ok = e && X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
    return ok ? 0 : -1;
}

static int set_serial(X509 *x)
{
    unsigned char b[16];
    BIGNUM *bn;
    int ok;

    if (RAND_bytes(b, sizeof(b)) != 1)
        return -1;
    b[0] &= 0x7f; /* positive */
    bn = BN_bin2bn(b, sizeof(b), NULL);
    ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
    BN_free(bn);
    return ok ? 0 : -1;
}

static int set_names(X509 *x, const struct tls_conf *t, const char *host)
{
    X509_NAME *n = X509_NAME_new();
    int ok = n != NULL;

    if (ok && strlen(host) <= CN_MAX)
        ok = X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)host, -1, -1,
                                        0);
    ok = ok && X509_set_subject_name(x, n) && X509_set_issuer_name(x, X509_get_subject_name(t->ca));
    X509_NAME_free(n);
    return ok ? 0 : -1;
}

static int set_extensions(X509 *x, const struct tls_conf *t, const char *host)
{
    X509V3_CTX ctx;
    char san[HOSTNAME_MAX + 8];
    struct ipaddr a;

    X509V3_set_ctx(&ctx, t->ca, x, NULL, NULL, 0);
    snprintf(san, sizeof(san), "%s:%s", ipaddr_parse(host, &a) == 0 ? "IP" : "DNS", host);
    if (add_ext(x, &ctx, NID_subject_alt_name, san) || //
        add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE") ||
        add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature") ||
        add_ext(x, &ctx, NID_ext_key_usage, "serverAuth") ||
        add_ext(x, &ctx, NID_subject_key_identifier, "hash") ||
        add_ext(x, &ctx, NID_authority_key_identifier, "keyid"))
        return -1;
    return 0;
}

static X509 *mint(const struct tls_conf *t, const char *host)
{
    X509 *x = X509_new();

    if (!x || !X509_set_version(x, 2) || set_serial(x) ||
        !X509_gmtime_adj(X509_getm_notBefore(x), -LEAF_SKEW_S) ||
        !X509_gmtime_adj(X509_getm_notAfter(x), LEAF_VALID_S) || !X509_set_pubkey(x, t->leaf_key) ||
        set_names(x, t, host) || set_extensions(x, t, host) ||
        !X509_sign(x, t->ca_key, EVP_sha256())) {
        X509_free(x);
        return NULL;
    }
    return x;
}

/* The entry for host, or the one to replace: an empty or the oldest. */
static struct leaf_entry *slot(struct tls_conf *t, const char *host)
{
    struct leaf_entry *oldest = &t->cache[0];

    for (size_t i = 0; i < LEAF_CACHE_MAX; i++) {
        struct leaf_entry *e = &t->cache[i];
        if (e->cert && strcmp(e->host, host) == 0)
            return e;
        if (!e->cert || (oldest->cert && e->made < oldest->made))
            oldest = e;
    }
    return oldest;
}

X509 *tls_leaf(struct tls_conf *t, const char *host)
{
    time_t now = time(NULL);
    X509 *x = NULL;

    pthread_mutex_lock(&t->lock);
    struct leaf_entry *e = slot(t, host);
    if (!e->cert || strcmp(e->host, host) != 0 || now - e->made > LEAF_REFRESH_S) {
        X509 *fresh = mint(t, host);
        if (fresh) {
            X509_free(e->cert);
            e->cert = fresh;
            e->made = now;
            snprintf(e->host, sizeof(e->host), "%s", host);
        }
    }
    if (e->cert && strcmp(e->host, host) == 0 && X509_up_ref(e->cert))
        x = e->cert;
    pthread_mutex_unlock(&t->lock);
    return x;
}
