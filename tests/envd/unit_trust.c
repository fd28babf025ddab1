/* egress_trust_text (envd/egress_trust.c): the proxy's CA added to the system
 * bundle between markers, an earlier block replaced or taken out, the rest of
 * the bundle kept byte for byte. Linked into unit-envd. */
#include "check.h"
#include "egress_trust.h"

#include <stdlib.h>
#include <string.h>

CHECK_COUNTERS;

void test_trust(int *total_passed, int *total_failed);

#define ROOTS "-----BEGIN CERTIFICATE-----\nROOT\n-----END CERTIFICATE-----\n"
#define CA1 "-----BEGIN CERTIFICATE-----\nCA1\n-----END CERTIFICATE-----\n"
#define CA2 "-----BEGIN CERTIFICATE-----\nCA2\n-----END CERTIFICATE-----\n"

static int is(const char *bundle, const char *ca, const char *want)
{
    size_t n;
    char *out = egress_trust_text(bundle, bundle ? strlen(bundle) : 0, ca, &n);
    int ok = out && n == strlen(want) && memcmp(out, want, n) == 0;

    free(out);
    return ok;
}

void test_trust(int *total_passed, int *total_failed)
{
    const char *with1 = ROOTS EGRESS_CA_BEGIN CA1 EGRESS_CA_END;

    CHECK(is(ROOTS, CA1, with1));
    CHECK(is(NULL, CA1, EGRESS_CA_BEGIN CA1 EGRESS_CA_END));        /* no bundle in the image */
    CHECK(is(with1, CA2, ROOTS EGRESS_CA_BEGIN CA2 EGRESS_CA_END)); /* another proxy's: replaced */
    CHECK(is(with1, NULL, ROOTS));                                  /* no proxy now: removed */
    CHECK(is(with1, CA1, with1));                                   /* unchanged */
    CHECK(is("A\n" EGRESS_CA_BEGIN CA1 EGRESS_CA_END "B\n", CA2,
             "A\nB\n" EGRESS_CA_BEGIN CA2 EGRESS_CA_END)); /* what follows the block kept */
    CHECK(is("no newline", CA1, "no newline\n" EGRESS_CA_BEGIN CA1 EGRESS_CA_END));
    CHECK(is(ROOTS, NULL, ROOTS));
    *total_passed += passed;
    *total_failed += failed;
}
