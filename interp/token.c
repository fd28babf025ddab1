/* token.c: holds the access token's digest and checks X-Access-Token
 * against it in constant time (token.h). */
#include "token.h"

#include "token_parse.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char want[TOKEN_DIGEST_LEN];
static int required; /* set once at start, read only after */

int token_load(int fd, char **rest)
{
    size_t got = 0, cap = 4096;
    char *buf = malloc(cap);
    ssize_t n = 1;

    *rest = NULL;
    if (!buf) {
        close(fd);
        return -1;
    }
    while (n > 0 && got < TOKEN_PIPE_MAX) {
        if (got + 1 >= cap) {
            char *more = realloc(buf, cap * 2);
            if (!more)
                break;
            buf = more;
            cap *= 2;
        }
        n = read(fd, buf + got, cap - 1 - got);
        got += n > 0 ? (size_t)n : 0;
    }
    close(fd);
    buf[got] = '\0';
    int rc = token_parse_line(buf, want);
    char *nl = strchr(buf, '\n');
    if (rc >= 0 && nl && nl[1])
        *rest = strdup(nl + 1);
    explicit_bzero(buf, got);
    free(buf);
    if (rc < 0)
        return -1;
    required = rc;
    return 0;
}

int token_ok(const char *header)
{
    unsigned char d[TOKEN_DIGEST_LEN];
    unsigned int n = 0;

    if (!required)
        return 1;
    if (!header || EVP_Digest(header, strlen(header), d, &n, EVP_sha256(), NULL) != 1 ||
        n != TOKEN_DIGEST_LEN)
        return 0;
    return CRYPTO_memcmp(d, want, TOKEN_DIGEST_LEN) == 0;
}
