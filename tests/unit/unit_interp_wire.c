/* Unit tests of interp/wire.c: Jupyter messages on the wire (decision
 * 0088), signed and checked as a kernel does, and refused as an attacker
 * would shape them. */
#include "check.h"
#include "wire.h"

#include <stdio.h>
#include <string.h>

void unit_interp_wire(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define KEY ((const unsigned char *)"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
#define KEYLEN strlen((const char *)KEY)

static struct wire_frame text(const char *s)
{
    return (struct wire_frame){(const unsigned char *)s, strlen(s)};
}

/* RFC 4231's HMAC-SHA256 test case 2, its data split over the four parts:
 * the signature is of their concatenation. */
static void test_sign(void)
{
    struct wire_frame parts[4] = {text("what do "), text("ya want "), text("for "),
                                  text("nothing?")};
    char sig[WIRE_SIG_HEX + 1];

    CHECK(wire_sign((const unsigned char *)"Jefe", 4, parts, sig) == 0);
    CHECK(strcmp(sig, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843") == 0);
    CHECK(wire_sign((const unsigned char *)"", 0, parts, sig) == 0 && sig[0] == '\0');
}

/* msg with two identities and an execute_request, encoded with KEY. */
static int encoded(struct wire_out *out)
{
    struct wire_msg m = {.nids = 2};

    m.ids[0] = text("client-a");
    m.ids[1] = text("router-b");
    m.header = wire_header("execute_request", "m-1", "s-1", "2026-12-06T22:00:00.000000Z");
    m.content = json_pack("{s:s, s:b}", "code", "1 + 1", "silent", 0);
    int rc = wire_encode(&m, KEY, KEYLEN, out);
    json_decref(m.header);
    json_decref(m.content);
    return rc;
}

/* out's frames as the decoder takes them. */
static size_t frames_of(const struct wire_out *out, struct wire_frame *f)
{
    for (size_t i = 0; i < out->n; i++)
        f[i] = (struct wire_frame){out->frames[i].data, out->frames[i].len};
    return out->n;
}

static void test_round_trip(void)
{
    struct wire_out out;
    struct wire_frame f[16];
    struct wire_msg m;
    char err[96] = "";

    CHECK(encoded(&out) == 0 && out.n == 8);
    CHECK(wire_decode(f, frames_of(&out, f), KEY, KEYLEN, &m, err, sizeof(err)) == 0);
    CHECK(m.nids == 2 && m.ids[1].len == 8 && memcmp(m.ids[1].data, "router-b", 8) == 0);
    CHECK(strcmp(wire_type(&m), "execute_request") == 0);
    CHECK(strcmp(json_string_value(json_object_get(m.content, "code")), "1 + 1") == 0);
    CHECK(json_object_size(m.parent) == 0 && json_object_size(m.metadata) == 0);
    CHECK(strcmp(json_string_value(json_object_get(m.header, "version")), WIRE_VERSION) == 0);
    wire_msg_clear(&m);
    wire_out_free(&out);
}

/* frames decoded with key: refused, err naming want. */
static int refused(const struct wire_frame *f, size_t n, const unsigned char *key, size_t keylen,
                   const char *want)
{
    struct wire_msg m;
    char err[96] = "";
    int rc = wire_decode(f, n, key, keylen, &m, err, sizeof(err));

    if (rc == 0 || !strstr(err, want))
        fprintf(stderr, "  decoded, or refused for \"%s\", not \"%s\"\n", err, want);
    return rc != 0 && strstr(err, want) && m.header == NULL;
}

static void test_refused(void)
{
    struct wire_out out;
    struct wire_frame f[16], sig;
    char forged[] = "{\"code\":\"import os; os.system('id')\",\"silent\":false}";

    CHECK(encoded(&out) == 0);
    frames_of(&out, f);
    /* the content swapped under the same signature */
    f[7] = text(forged);
    CHECK(refused(f, out.n, KEY, KEYLEN, "bad signature"));
    f[7] = (struct wire_frame){out.frames[7].data, out.frames[7].len};
    /* another key; no key where one is due; a signature cut short */
    CHECK(refused(f, out.n, (const unsigned char *)"other", 5, "bad signature"));
    sig = f[3];
    f[3] = text("");
    CHECK(refused(f, out.n, KEY, KEYLEN, "bad signature"));
    f[3] = (struct wire_frame){sig.data, sig.len - 1};
    CHECK(refused(f, out.n, KEY, KEYLEN, "bad signature"));
    f[3] = sig;
    /* no delimiter; fewer than four parts after it */
    CHECK(refused(f + 3, out.n - 3, KEY, KEYLEN, "no <IDS|MSG> delimiter"));
    CHECK(refused(f, out.n - 1, KEY, KEYLEN, "fewer than four parts"));
    wire_out_free(&out);
}

/* Signed correctly, but a part is no object, or has a key twice. */
static void test_bad_parts(void)
{
    struct wire_frame f[6] = {text(WIRE_DELIM), text(""), text("{}"), text("{}"), text("{}")};
    char sig[WIRE_SIG_HEX + 1];
    const char *bad[] = {"[1,2]", "\"text\"", "{\"a\":1,\"a\":2}", "{\"a\":", ""};

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        f[5] = text(bad[i]);
        CHECK(wire_sign(KEY, KEYLEN, &f[2], sig) == 0);
        f[1] = text(sig);
        CHECK(refused(f, 6, KEY, KEYLEN, "not a JSON object"));
    }
}

void unit_interp_wire(int *total_passed, int *total_failed)
{
    test_sign();
    test_round_trip();
    test_refused();
    test_bad_parts();
    *total_passed += passed;
    *total_failed += failed;
}
