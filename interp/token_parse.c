/* token_parse.c: the line envd hands corral-interp on its token pipe
 * (envd/interp_launch.c): the hex SHA-256 of the sandbox's access token, or
 * "-" when the sandbox has none. Pure. */
#include "token_parse.h"

#include <string.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int token_parse_line(const char *line, unsigned char digest[TOKEN_DIGEST_LEN])
{
    size_t n = strcspn(line, "\n");

    if (n == 1 && line[0] == '-')
        return 0;
    if (n != 2 * TOKEN_DIGEST_LEN)
        return -1;
    for (size_t i = 0; i < TOKEN_DIGEST_LEN; i++) {
        int hi = hexval(line[2 * i]), lo = hexval(line[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        digest[i] = (unsigned char)(hi << 4 | lo);
    }
    return 1;
}
