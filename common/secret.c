#include "secret.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void to_hex(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

int secret_random_hex(char *out, size_t nbytes)
{
    unsigned char buf[64];

    if (nbytes > sizeof(buf) || RAND_bytes(buf, (int)nbytes) != 1)
        return -1;
    to_hex(buf, nbytes, out);
    return 0;
}

void secret_mac_hex(const char *key, const char *msg, char out[SECRET_MAC_HEX])
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;

    HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)msg, strlen(msg), mac, &len);
    to_hex(mac, len, out);
}

int secret_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = la != lb;

    /* Compare b's length worth of bytes, wrapping over a, so timing reveals nothing of a. */
    for (size_t i = 0; i < lb; i++)
        diff |= (unsigned char)(la ? a[i % la] : 0) ^ (unsigned char)b[i];
    return diff == 0;
}

int secret_read_file(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
    struct stat st;
    FILE *f;
    size_t n;

    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "%s: readable by group or others; chmod 600 it", path);
        return -1;
    }
    f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    n = fread(out, 1, outlen - 1, f);
    fclose(f);
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
        n--;
    out[n] = '\0';
    return 0;
}

int secret_load_file(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
    if (secret_read_file(path, out, outlen, err, errlen) != 0)
        return -1;
    if (strlen(out) < 32) {
        snprintf(err, errlen, "%s: the secret must be at least 32 characters", path);
        return -1;
    }
    return 0;
}
