/* Unit tests of common/token.c: the e2b_ spelling of API keys (decision 0038)
 * beside the older ck_ spelling and join tokens. */
#include "check.h"
#include "token.h"

#include <string.h>

void unit_token(int *total_passed, int *total_failed);

static int passed, failed;

/* 1 when text parses as an API key naming exactly ws, id and secret. */
static int is_key(const char *text, const char *ws, const char *id, const char *secret)
{
    struct token t;

    token_parse(text, &t);
    return t.kind == TOKEN_API_KEY && !strcmp(t.ws, ws) && !strcmp(t.id, id) &&
           !strcmp(t.secret, secret);
}

static int invalid(const char *text)
{
    struct token t;

    token_parse(text, &t);
    return t.kind == TOKEN_INVALID && !t.ws[0] && !t.id[0] && !t.secret[0];
}

/* Formats, checks the text is what E2B SDKs accept (^e2b_[0-9a-f]+$), parses back. */
static int round_trip(const char *ws, const char *id, const char *secret)
{
    char text[TOKEN_TEXT_MAX];

    token_format(TOKEN_API_KEY, ws, id, secret, text);
    if (strncmp(text, "e2b_", 4) != 0 || !text[4] ||
        strspn(text + 4, "0123456789abcdef") != strlen(text + 4))
        return 0;
    return is_key(text, ws, id, secret);
}

static void test_round_trip(void)
{
    static const char s32[] = "0123456789abcdef0123456789abcdef";
    static const char s64[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    char text[TOKEN_TEXT_MAX];

    CHECK(round_trip("0a1b2c3d4e5f6071", "8192a3b4c5d6e7f8", "ffee"));
    CHECK(round_trip("a", "b", "c"));     /* shortest fields */
    CHECK(round_trip(s32, s32, s64));     /* longest fields */
    CHECK(round_trip("1", "1f", "11f2")); /* digits that look like lengths */
    token_format(TOKEN_API_KEY, "0a1b", "2c3d", "ffee", text);
    CHECK(!strcmp(text, "e2b_1040a1b042c3dffee"));
    CHECK(is_key("ck_0a1b_2c3d_ffee", "0a1b", "2c3d", "ffee")); /* old spelling, same record */
    token_format(TOKEN_JOIN, "", "2c3d", "ffee", text);
    CHECK(!strcmp(text, "jn__2c3d_ffee")); /* join tokens keep their spelling */
}

/* Triples whose fields join to the same digits ("0a1bffee") still give
 * different keys, each reading back as itself: the length prefixes leave one
 * reading only. */
static void test_ambiguity(void)
{
    static const char *const split[][3] = {
        {"0a", "1b", "ffee"}, {"0a1", "b", "ffee"}, {"0a", "1", "bffee"}, {"0", "a1bf", "fee"}};
    char text[4][TOKEN_TEXT_MAX];

    for (int i = 0; i < 4; i++) {
        token_format(TOKEN_API_KEY, split[i][0], split[i][1], split[i][2], text[i]);
        CHECK(is_key(text[i], split[i][0], split[i][1], split[i][2]));
        for (int j = 0; j < i; j++)
            CHECK(strcmp(text[i], text[j]) != 0);
    }
    CHECK(is_key("e2b_1020a021bffee", "0a", "1b", "ffee"));
    CHECK(invalid("e2b_1000a021bffee")); /* zero-length workspace */
    CHECK(invalid("e2b_1020a001bffee")); /* zero-length id */
    CHECK(invalid("e2b_1020a041bff"));   /* nothing left for the secret */
}

static void test_bad_shapes(void)
{
    static const char long_secret[] =
        "e2b_1040a1b042c3d0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0";
    static const char long_ws[] = "e2b_1210123456789abcdef0123456789abcdef0042c3dffee";

    CHECK(invalid(""));
    CHECK(invalid("e2b_"));
    CHECK(invalid("e2b_1"));
    CHECK(invalid("e2b_10"));
    CHECK(invalid("e2b_104"));
    CHECK(invalid("e2b_1040a1b"));           /* no id length */
    CHECK(invalid("e2b_1040a1b04"));         /* id shorter than its length */
    CHECK(invalid("e2b_1040a1b042c3d"));     /* no secret */
    CHECK(invalid("e2b_2040a1b042c3dffee")); /* unknown version */
    CHECK(invalid("e2b_1040A1B042c3dffee")); /* uppercase is not ours */
    CHECK(invalid("E2B_1040a1b042c3dffee"));
    CHECK(invalid("e2b_1040a1b042c3dffe_e")); /* a separator inside */
    CHECK(invalid("e2b_1040a1b042c3dffee\n"));
    CHECK(invalid("e2b_1040a1b0g2c3dffee")); /* a length that is not hex */
    CHECK(invalid(long_secret));             /* secret over 64 digits */
    CHECK(invalid(long_ws));                 /* workspace length 33 */
    CHECK(invalid("e2b_0a1b_2c3d_ffee"));    /* the ck_ layout under the new prefix */
    CHECK(invalid("ck_1040a1b042c3dffee"));  /* the new layout under the old prefix */
}

void unit_token(int *total_passed, int *total_failed)
{
    test_round_trip();
    test_ambiguity();
    test_bad_shapes();
    *total_passed += passed;
    *total_failed += failed;
}
