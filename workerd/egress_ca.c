#include "egress_ca.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CA_DAYS 3650 /* outlives any sandbox; the key never leaves this host */

static int add_ext(X509 *crt, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;
    int ok;

    X509V3_set_ctx(&ctx, crt, crt, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    ok = ext && X509_add_ext(crt, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

/* A CA certificate for key, named after the sandbox: it may sign only
 * end-entity certificates (pathlen 0). */
static X509 *make_cert(EVP_PKEY *key, const char *sbid)
{
    X509 *crt = X509_new();
    X509_NAME *name = X509_NAME_new();
    unsigned char serial[16] = {0};
    BIGNUM *bn = NULL;
    char cn[96];
    int ok;

    snprintf(cn, sizeof(cn), "Corral egress CA %.64s", sbid);
    ok = crt && name && RAND_bytes(serial, sizeof(serial)) == 1;
    if (ok)
        serial[0] &= 0x7f; /* positive */
    ok = ok && (bn = BN_bin2bn(serial, sizeof(serial), NULL)) &&
         BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(crt)) && X509_set_version(crt, 2) &&
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
                                    0) &&
         X509_set_subject_name(crt, name) && X509_set_issuer_name(crt, name) &&
         X509_gmtime_adj(X509_getm_notBefore(crt), -3600) &&
         X509_gmtime_adj(X509_getm_notAfter(crt), (long)CA_DAYS * 86400) &&
         X509_set_pubkey(crt, key) &&
         add_ext(crt, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
         add_ext(crt, NID_key_usage, "critical,keyCertSign,cRLSign") &&
         add_ext(crt, NID_subject_key_identifier, "hash") && X509_sign(crt, key, EVP_sha256()) > 0;
    BN_free(bn);
    X509_NAME_free(name);
    if (!ok) {
        X509_free(crt);
        return NULL;
    }
    return crt;
}

/* Writes path by a temporary file and a rename, with mode and owner. */
static int write_pem(const char *path, mode_t mode, uid_t owner, EVP_PKEY *key, X509 *crt)
{
    char tmp[4200];
    FILE *f;
    int fd, ok;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    unlink(tmp);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    ok = key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) == 1
             : PEM_write_X509(f, crt) == 1;
    ok = fclose(f) == 0 && ok && fchownat(AT_FDCWD, tmp, owner, owner, 0) == 0 &&
         chmod(tmp, mode) == 0 && rename(tmp, path) == 0;
    if (!ok)
        unlink(tmp);
    return ok ? 0 : -1;
}

int egress_ca_ensure(const char *dir, const char *sbid, uid_t owner, char *err, size_t errlen)
{
    char kpath[4096], cpath[4096];
    EVP_PKEY *key;
    X509 *crt = NULL;
    int ok;

    snprintf(kpath, sizeof(kpath), "%s/ca.key", dir);
    snprintf(cpath, sizeof(cpath), "%s/ca.pem", dir);
    if (access(kpath, F_OK) == 0 && access(cpath, F_OK) == 0)
        return 0;
    key = EVP_EC_gen("P-256");
    ok = key && (crt = make_cert(key, sbid)) && write_pem(kpath, 0400, owner, key, NULL) == 0 &&
         write_pem(cpath, 0444, 0, NULL, crt) == 0;
    if (!ok)
        snprintf(err, errlen, "egress CA of %s: cannot make it in %.200s: %s", sbid, dir,
                 errno ? strerror(errno) : "OpenSSL failed");
    X509_free(crt);
    EVP_PKEY_free(key);
    return ok ? 0 : -1;
}
