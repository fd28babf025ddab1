/* Unit tests of interp/token_parse.c: the token line envd hands
 * corral-interp (decision 0088). */
#include "check.h"
#include "token_parse.h"

#include <string.h>

void unit_interp_token(int *total_passed, int *total_failed);

CHECK_COUNTERS;

static void test_lines(void)
{
    unsigned char d[TOKEN_DIGEST_LEN];
    char hex[2 * TOKEN_DIGEST_LEN + 2];

    for (int i = 0; i < TOKEN_DIGEST_LEN; i++)
        memcpy(hex + 2 * i, i % 2 ? "0f" : "a9", 2);
    memcpy(hex + 2 * TOKEN_DIGEST_LEN, "\n", 2);
    CHECK(token_parse_line(hex, d) == 1 && d[0] == 0xa9 && d[1] == 0x0f && d[31] == 0x0f);
    hex[2 * TOKEN_DIGEST_LEN] = '\0'; /* without its newline */
    CHECK(token_parse_line(hex, d) == 1);
    CHECK(token_parse_line("-\n", d) == 0);
    CHECK(token_parse_line("-", d) == 0);
    /* anything else means the server cannot tell who may run code: refused */
    CHECK(token_parse_line("", d) == -1);
    CHECK(token_parse_line("--\n", d) == -1);
    hex[5] = 'A'; /* upper case is not what envd writes */
    CHECK(token_parse_line(hex, d) == -1);
    hex[5] = 'f';
    hex[2 * TOKEN_DIGEST_LEN - 1] = '\0'; /* one digit short */
    CHECK(token_parse_line(hex, d) == -1);
}

void unit_interp_token(int *total_passed, int *total_failed)
{
    test_lines();
    *total_passed += passed;
    *total_failed += failed;
}
