/* Unit tests of handlers/keys_parse.c: the bodies of POST /v1/keys and POST
 * /v1/join-tokens, each refusal's exact message (an unknown field before a
 * bad value) and what a good body gives, defaults included. */
#include "check.h"
#include "keys_parse.h"

#include <string.h>

void unit_keys(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define LONG_KEY "k123456789012345678901234567890123456789012345678901234567890123456789"

struct key_row {
    const char *body;
    enum role role;      /* when accepted */
    const char *message; /* when refused: exact */
};

static const struct key_row key_rows[] = {
    {"{}", ROLE_MEMBER, NULL},
    {"{\"role\":\"member\"}", ROLE_MEMBER, NULL},
    {"{\"role\":\"owner\"}", ROLE_OWNER, NULL},
    {"{\"role\":\"admin\"}", ROLE_NONE, "role: must be \"owner\" or \"member\""},
    {"{\"role\":\"Owner\"}", ROLE_NONE, "role: must be \"owner\" or \"member\""},
    {"{\"role\":null}", ROLE_NONE, "role: must be \"owner\" or \"member\""},
    {"{\"role\":1}", ROLE_NONE, "role: must be \"owner\" or \"member\""},
    {"{\"name\":\"ci\"}", ROLE_NONE, "name: unknown field"},
    {"{\"ttl_seconds\":60}", ROLE_NONE, "ttl_seconds: unknown field"},
    {"{\"role\":\"admin\",\"x\":1}", ROLE_NONE, "x: unknown field"},
    {"{\"" LONG_KEY "\":1}", ROLE_NONE,
     "k123456789012345678901234567890123456789012345678901234567890123: unknown field"},
};

static void test_key_create(void)
{
    for (size_t i = 0; i < sizeof(key_rows) / sizeof(key_rows[0]); i++) {
        const struct key_row *r = &key_rows[i];
        json_t *b = json_loads(r->body, 0, NULL);
        enum role role = ROLE_NONE;
        char err[128] = "";
        int rc = b ? key_create_parse(b, &role, err, sizeof(err)) : -2;
        int ok = r->message ? rc == -1 && strcmp(err, r->message) == 0 : rc == 0 && role == r->role;

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  key row %zu: %d \"%s\"\n", i, rc, err);
        json_decref(b);
    }
}

struct ttl_row {
    const char *body;
    long ttl;            /* when accepted */
    const char *message; /* when refused: exact */
};

#define TTL_RULE "ttl_seconds: must be an integer in [60, 2592000]"

static const struct ttl_row ttl_rows[] = {
    {"{}", 3600, NULL},
    {"{\"ttl_seconds\":60}", 60, NULL},
    {"{\"ttl_seconds\":2592000}", 2592000, NULL},
    {"{\"ttl_seconds\":59}", 0, TTL_RULE},
    {"{\"ttl_seconds\":2592001}", 0, TTL_RULE},
    {"{\"ttl_seconds\":\"3600\"}", 0, TTL_RULE},
    {"{\"ttl_seconds\":3600.0}", 0, TTL_RULE},
    {"{\"ttl_seconds\":null}", 0, TTL_RULE},
    {"{\"role\":\"owner\"}", 0, "role: unknown field"},
    {"{\"ttl_seconds\":1,\"ttl\":3600}", 0, "ttl: unknown field"},
};

static void test_jointoken_create(void)
{
    for (size_t i = 0; i < sizeof(ttl_rows) / sizeof(ttl_rows[0]); i++) {
        const struct ttl_row *r = &ttl_rows[i];
        json_t *b = json_loads(r->body, 0, NULL);
        long ttl = -1;
        char err[128] = "";
        int rc = b ? jointoken_create_parse(b, &ttl, err, sizeof(err)) : -2;
        int ok = r->message ? rc == -1 && strcmp(err, r->message) == 0 : rc == 0 && ttl == r->ttl;

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  join token row %zu: %d \"%s\"\n", i, rc, err);
        json_decref(b);
    }
}

void unit_keys(int *total_passed, int *total_failed)
{
    test_key_create();
    test_jointoken_create();
    *total_passed += passed;
    *total_failed += failed;
}
