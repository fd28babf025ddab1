/* Unit tests of transform_audit.c: requests a rule changed, counted per host
 * and header names, taken as the line the resolver gets, put back when it was
 * not delivered, and past the table's bound counted as dropped, never lost.
 * Counted with unit_egress.c's totals; run from its main. */
#include "egress/rules.h"
#include "egress/transform_audit.h"

#include <jansson.h>
#include "unit_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void test_audit_all(void);

/* The count of (host, names joined by ',') in a taken line; -1 absent. */
static long long count_of(json_t *line, const char *host, const char *names)
{
    json_t *e, *n;
    size_t i, k;

    json_array_foreach(json_object_get(line, "audit"), i, e)
    {
        char got[256] = "";
        json_array_foreach(json_object_get(e, "headers"), k, n)
        {
            strncat(got, k ? "," : "", sizeof(got) - strlen(got) - 1);
            strncat(got, json_string_value(n), sizeof(got) - strlen(got) - 1);
        }
        if (strcmp(json_string_value(json_object_get(e, "host")), host) == 0 &&
            strcmp(got, names) == 0)
            return (long long)json_integer_value(json_object_get(e, "count"));
    }
    return -1;
}

void test_audit_all(void)
{
    struct rule_header h[2] = {{"Authorization", "Bearer secret-value"}, {"X-Key", "v"}};
    struct rule_set two = {"api.test", false, h, 2}, one = {".example.com", true, h + 1, 1};
    char host[64], *text;
    json_t *line;

    CHECK(transform_audit_take() == NULL); /* nothing counted: nothing to send */
    transform_audit_note("api.test", &two);
    transform_audit_note("api.test", &two);
    transform_audit_note("a.example.com", &one);
    text = transform_audit_take();
    line = text ? json_loads(text, 0, NULL) : NULL;
    CHECK(count_of(line, "api.test", "Authorization,X-Key") == 2);
    CHECK(count_of(line, "a.example.com", "X-Key") == 1);
    CHECK(text && !strstr(text, "secret-value") && !strstr(text, "\"v\""));
    CHECK(transform_audit_take() == NULL); /* taken */
    /* Not delivered: back, and added to what came meanwhile. */
    transform_audit_note("api.test", &two);
    transform_audit_return(text);
    free(text);
    json_decref(line);
    text = transform_audit_take();
    line = text ? json_loads(text, 0, NULL) : NULL;
    CHECK(count_of(line, "api.test", "Authorization,X-Key") == 3);
    CHECK(count_of(line, "a.example.com", "X-Key") == 1);
    free(text);
    json_decref(line);
    /* Past the bound: counted as dropped. */
    for (int i = 0; i < AUDIT_ENTRIES_MAX + 5; i++) {
        snprintf(host, sizeof(host), "h%d.test", i);
        transform_audit_note(host, &one);
    }
    text = transform_audit_take();
    line = text ? json_loads(text, 0, NULL) : NULL;
    CHECK(json_array_size(json_object_get(line, "audit")) == AUDIT_ENTRIES_MAX);
    CHECK(json_integer_value(json_object_get(line, "dropped")) == 5);
    free(text);
    json_decref(line);
}
