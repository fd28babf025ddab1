/* Table tests of who a request is and how long its URL is good for: decimal
 * numbers as untrusted text writes them (envd/decimal_parse.c), a signed
 * URL's expiry at the edges of its window (auth_parse.c), the user an
 * Authorization header names (basic_auth_parse.c). Linked into unit-envd
 * (see unit_envd.c's main). */
#include "auth_parse.h"
#include "basic_auth_parse.h"
#include "check.h"
#include "decimal_parse.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

CHECK_COUNTERS;

void test_auth(int *total_passed, int *total_failed);

struct decimal_row {
    const char *in;
    int rc;
    long long want;
};

static const struct decimal_row decimal_rows[] = {
    {"0", 0, 0},
    {"5", 0, 5},
    {"007", 0, 7},
    {"1700000000", 0, 1700000000LL},
    {"9223372036854775807", 0, LLONG_MAX},
    {"9223372036854775808", -1, 0}, /* one over */
    {"99999999999999999999", -1, 0},
    {"", -1, 0},
    {"5abc", -1, 0},
    {"9999999999abc", -1, 0},
    {"-5", -1, 0},
    {"+5", -1, 0},
    {" 5", -1, 0},
    {"5 ", -1, 0},
    {"0x10", -1, 0},
    {"1e3", -1, 0},
    {"1.5", -1, 0},
};

static void test_decimal(void)
{
    for (size_t i = 0; i < sizeof(decimal_rows) / sizeof(decimal_rows[0]); i++) {
        const struct decimal_row *d = &decimal_rows[i];
        long long v = -42;
        int rc = decimal_parse(d->in, &v);
        int ok = rc == d->rc && v == (d->rc == 0 ? d->want : -42);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  decimal \"%s\": %d, %lld\n", d->in, rc, v);
    }
}

#define NOW 1700000000LL
#define LAST_OK (NOW + AUTH_SIGNATURE_MAX_WINDOW_S + AUTH_SIGNATURE_CLOCK_SKEW_S)

struct expiry_row {
    const char *exp; /* NULL: no signature_expiration */
    int required;
    const char *msg; /* NULL: accepted */
};

static const char too_far[] = "signature_expiration is more than 7 days ahead";
static const char expired[] = "signature is already expired";

static void test_expiry(void)
{
    char now[24], before[24], last[24], after[24];
    const struct expiry_row rows[] = {
        {NULL, 0, NULL},
        {NULL, 1, "signature_expiration is required by this server"},
        {now, 0, NULL},
        {now, 1, NULL},
        {last, 0, NULL},
        {before, 0, expired},
        {"0", 0, expired},
        {after, 1, too_far},
        {"99999999999", 0, too_far},
        {"9999999999abc", 0, AUTH_EXPIRATION_NOT_DECIMAL},
        {"-1", 0, AUTH_EXPIRATION_NOT_DECIMAL},
        {"", 0, AUTH_EXPIRATION_NOT_DECIMAL},
        {" 1700000000", 0, AUTH_EXPIRATION_NOT_DECIMAL},
        {"99999999999999999999", 0, AUTH_EXPIRATION_NOT_DECIMAL},
    };

    snprintf(now, sizeof(now), "%lld", NOW);
    snprintf(before, sizeof(before), "%lld", NOW - 1);
    snprintf(last, sizeof(last), "%lld", LAST_OK);
    snprintf(after, sizeof(after), "%lld", LAST_OK + 1);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char msg[200] = "";
        int rc = auth_expiration_check(rows[i].exp, rows[i].required, NOW, msg, sizeof(msg));
        int ok = rows[i].msg == NULL ? rc == 0 && msg[0] == '\0'
                                     : rc == -1 && !strncmp(msg, rows[i].msg, strlen(rows[i].msg));
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  expiry row %zu (%s): %d \"%s\"\n", i, rows[i].exp, rc, msg);
    }
}

struct basic_row {
    const char *header;
    int rc;
    const char *name;
};

static const struct basic_row basic_rows[] = {
    {NULL, 0, ""},                         /* absent: the default user */
    {"Bearer dXNlcjo=", 0, ""},            /* not Basic */
    {"Basic", 0, ""},                      /* no space, no credentials */
    {"Basic dXNlcjo=", 1, "user"},         /* "user:" as the SDK sends it */
    {"basic cm9vdDo=", 1, "root"},         /* the scheme in any case */
    {"BASIC cm9vdA==", 1, "root"},         /* "root", no colon */
    {"Basic YTpiOmM=", 1, "a"},            /* "a:b:c": up to the first colon */
    {"Basic dXNlcjpzZWNyZXQ=", 1, "user"}, /* a password is ignored */
    {"Basic Ojo=", 0, ""},                 /* "::": no name */
    {"Basic ", 0, ""},                     /* empty */
    {"Basic dQB4Og==", 1, "u"},            /* "u\0x:": a NUL ends the name */
    {"Basic dXNlcjo", 1, "user"},          /* unpadded */
    {"Basic dXNl*jo=", -1, ""},            /* not base64 */
    {"Basic  dXNlcjo=", -1, ""},           /* a second space is not base64 */
};

static void test_basic_auth(void)
{
    char name[16], big[64];

    for (size_t i = 0; i < sizeof(basic_rows) / sizeof(basic_rows[0]); i++) {
        const struct basic_row *b = &basic_rows[i];
        int rc;
        snprintf(name, sizeof(name), "unset");
        rc = basic_auth_user(b->header, name, sizeof(name));
        int ok = rc == b->rc && (rc != 1 || strcmp(name, b->name) == 0);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  basic \"%s\": %d \"%s\"\n", b->header, rc, name);
    }
    /* 15 bytes fit a 16-byte name, 16 do not */
    CHECK(basic_auth_user("Basic YWFhYWFhYWFhYWFhYWFh", name, sizeof(name)) == 1 &&
          strlen(name) == 15);
    snprintf(big, sizeof(big), "Basic YWFhYWFhYWFhYWFhYWFhYQ==");
    CHECK(basic_auth_user(big, name, sizeof(name)) == -1);
}

void test_auth(int *total_passed, int *total_failed)
{
    test_decimal();
    test_expiry();
    test_basic_auth();
    *total_passed += passed;
    *total_failed += failed;
}
