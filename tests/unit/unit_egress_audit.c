/* Unit tests of handlers/egress_audit_parse.c: a worker's forwarded transform
 * counts, every field's refusal named, and a value nowhere to be carried. */
#include "check.h"
#include "egress_audit_parse.h"

#include <stdlib.h>
#include <string.h>

void unit_egress_audit(int *total_passed, int *total_failed);

CHECK_COUNTERS;

struct row {
    const char *body;
    const char *fault; /* NULL: accepted; else a part of the message */
};

static const struct row rows[] = {
    {"{\"sandbox\":\"s1\",\"audit\":[{\"host\":\"api.test\",\"headers\":[\"Authorization\",\"X-K\"]"
     ","
     "\"count\":3}]}",
     NULL},
    {"{\"sandbox\":\"s1\",\"audit\":[],\"dropped\":7}", NULL},
    {"{\"sandbox\":\"s1\",\"audit\":[{\"host\":\"::1\",\"headers\":[],\"count\":1}]}", NULL},
    {"[]", "JSON object"},
    {"{\"audit\":[]}", "sandbox"},
    {"{\"sandbox\":\"s1\"}", "audit: an array"},
    {"{\"sandbox\":\"s1\",\"audit\":[{\"host\":\"a b\",\"headers\":[],\"count\":1}]}", "host"},
    {"{\"sandbox\":\"s1\",\"audit\":[{\"host\":\"a.test\",\"headers\":[\"A: v\"],\"count\":1}]}",
     "headers[]"},
    {"{\"sandbox\":\"s1\",\"audit\":[{\"host\":\"a.test\",\"headers\":[{\"A\":\"v\"}],\"count\":1}]"
     "}",
     "headers[]"},
    {"{\"sandbox\":\"s1\",\"audit\":[{\"host\":\"a.test\",\"headers\":[],\"count\":0}]}", "count"},
    {"{\"sandbox\":\"s1\",\"audit\":[{\"host\":\"a.test\",\"headers\":[],\"count\":\"2\"}]}",
     "count"},
    {"{\"sandbox\":\"s1\",\"audit\":[],\"dropped\":-1}", "dropped"},
};

void unit_egress_audit(int *total_passed, int *total_failed)
{
    struct egress_audit_body *b = malloc(sizeof(*b));

    for (size_t i = 0; b && i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_t *j = json_loads(rows[i].body, 0, NULL);
        char err[160] = "";
        int rc = j ? egress_audit_parse(j, b, err, sizeof(err)) : -2;
        int ok = rows[i].fault ? rc == -1 && strstr(err, rows[i].fault) : rc == 0;

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  egress audit row %zu: rc %d err \"%s\"\n", i, rc, err);
        json_decref(j);
    }
    json_t *j = json_loads(rows[0].body, 0, NULL);
    CHECK(b && egress_audit_parse(j, b, (char[8]){0}, 8) == 0 && b->n == 1 &&
          strcmp(b->e[0].headers, "Authorization,X-K") == 0 && b->e[0].count == 3 &&
          strcmp(b->e[0].host, "api.test") == 0);
    json_decref(j);
    free(b);
    *total_passed += passed;
    *total_failed += failed;
}
