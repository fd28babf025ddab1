/* Unit tests of handlers/volume_create_parse.c: a volume create's body (both
 * surfaces), the refusal's exact message and the name a good body gives (the
 * name's own rule is tested with volume_name_ok in unit_lifecycle.c). */
#include "check.h"
#include "volume_create_parse.h"

#include <string.h>

void unit_volume_create(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define NAME_RULE "name: 1-64 characters [A-Za-z0-9._-], starting with a letter or digit"

struct row {
    const char *body;
    const char *name; /* when accepted; refused (NAME_RULE) when NULL */
};

static const struct row rows[] = {
    {"{\"name\":\"data\"}", "data"},
    {"{\"name\":\"A.b_c-1\",\"other\":true}", "A.b_c-1"},
    {"{}", NULL},
    {"{\"name\":null}", NULL},
    {"{\"name\":7}", NULL},
    {"{\"name\":\"\"}", NULL},
    {"{\"name\":\"-x\"}", NULL},
    {"{\"name\":\"a/b\"}", NULL},
    {"{\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}", NULL},
};

void unit_volume_create(int *total_passed, int *total_failed)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_t *b = json_loads(rows[i].body, 0, NULL);
        const char *name = NULL;
        char err[128] = "";
        int rc = b ? volume_create_parse(b, &name, err, sizeof(err)) : -2;
        int ok = rows[i].name ? rc == 0 && name && strcmp(name, rows[i].name) == 0
                              : rc == -1 && strcmp(err, NAME_RULE) == 0;

        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  volume create row %zu: %d \"%s\"\n", i, rc, err);
        json_decref(b);
    }
    *total_passed += passed;
    *total_failed += failed;
}
