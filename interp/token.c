/* token.c: holds the access token's digest and checks X-Access-Token
 * against it in constant time (token.h). */
#include "token.h"

#include "token_parse.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <string.h>
#include <unistd.h>

static unsigned char want[TOKEN_DIGEST_LEN];
static int required; /* set once at start, read only after */

int token_load(int fd)
{
    char line[2 * TOKEN_DIGEST_LEN + 4];
    size_t got = 0;
    ssize_t n;

    while (got < sizeof(line) - 1 && (n = read(fd, line + got, sizeof(line) - 1 - got)) > 0)
        got += (size_t)n;
    close(fd);
    line[got] = '\0';
    int rc = token_parse_line(line, want);
    memset(line, 0, sizeof(line));
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
