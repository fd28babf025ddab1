/* Unit tests of interp/env_code.c: a call's env_vars as the code its
 * context's kernel runs around the cell (decision 0088). */
#include "check.h"
#include "env_code.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void unit_interp_env_code(int *total_passed, int *total_failed);

CHECK_COUNTERS;

/* env_code_set(lang, vars as JSON text): refused with err naming want. */
static int refused(const char *lang, const char *vars, const char *want)
{
    json_t *v = json_loads(vars, 0, NULL);
    char err[160] = "";
    char *code = env_code_set(lang, v, err, sizeof(err));
    int ok = code == NULL && strstr(err, want) != NULL;

    if (!ok)
        fprintf(stderr, "  %s %s: \"%s\", not refused for \"%s\"\n", lang, vars, err, want);
    free(code);
    json_decref(v);
    return ok;
}

static void test_python(void)
{
    json_t *v = json_loads("{\"FOO\":\"a\\\"b\\n\",\"BAR\":\"\\u00e9\"}", 0, NULL);
    char err[160] = "";
    char *set = env_code_set("python", v, err, sizeof(err)), *restore = env_code_restore("python");

    /* the values as one JSON (= Python) literal, ASCII only: no quote or
     * newline of a value ends the statement */
    CHECK(set && strstr(set, "environ.update({\"FOO\":\"a\\\"b\\n\",\"BAR\":\"\\u00E9\"})\n"));
    CHECK(set && strstr(set, "for k in {\"FOO\""));
    {
        int lines = 0;

        for (const char *p = set; p && *p; p++)
            lines += *p == '\n';
        CHECK(lines == 3); /* the value's newline stayed an escape */
    }
    CHECK(restore && strstr(restore, "environ.pop(") && strstr(restore, "del __corral_env_saved"));
    free(set);
    free(restore);
    json_decref(v);
}

static void test_refused(void)
{
    CHECK(refused("python", "[\"A\"]", "must be an object of strings"));
    CHECK(refused("python", "{\"A\":1}", "A must be a name"));
    CHECK(refused("python", "{\"A=B\":\"x\"}", "A=B must be a name"));
    CHECK(refused("python", "{\"\":\"x\"}", "must be a name"));
    CHECK(refused("bash", "{\"A-B\":\"x\"}", "A-B is not a name bash can set"));
    CHECK(refused("bash", "{\"1A\":\"x\"}", "1A is not a name bash can set"));
    CHECK(refused("cobol", "{\"A\":\"x\"}", "for a cobol context are not supported"));
    CHECK(env_code_restore("cobol") == NULL);
}

/* Each language's code holds the value as that language's literal, so no
 * quote in a value ends it (run for real by tests/interp). */
/* A long name and a short value: the code's size is the name's six times
 * over (ASan sees an overflow: an earlier size counted it four times). */
static void test_bash_long_name(void)
{
    char name[301], *code;
    json_t *v = json_object();
    char err[160] = "";

    memset(name, 'N', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    json_object_set_new(v, name, json_string(""));
    code = env_code_set("bash", v, err, sizeof(err));
    CHECK(code && strstr(code, "export NNN") && strstr(code, "=''\n"));
    CHECK(code && strlen(code) > 6 * 300);
    free(code);
    json_decref(v);
}

static void test_other_languages(void)
{
    json_t *v = json_loads("{\"FOO\":\"it's \\\"x\\\"\"}", 0, NULL);
    char err[160] = "";
    char *bash = env_code_set("bash", v, err, sizeof(err)),
         *js = env_code_set("js", v, err, sizeof(err)), *r = env_code_set("r", v, err, sizeof(err));

    CHECK(bash && strstr(bash, "export FOO='it'\\''s \"x\"'\n"));
    CHECK(bash && strstr(bash, "__corral_env_names=FOO,\n"));
    CHECK(js && strstr(js, "Object.entries({\"FOO\":\"it's \\\"x\\\"\"})"));
    CHECK(r && strstr(r, "Sys.getenv(c(\"FOO\"), unset = NA)"));
    CHECK(r && strstr(r, "do.call(Sys.setenv, list(\"FOO\"=\"it's \\\"x\\\"\"))"));
    free(bash);
    free(js);
    free(r);
    json_decref(v);
}

void unit_interp_env_code(int *total_passed, int *total_failed)
{
    test_python();
    test_refused();
    test_other_languages();
    test_bash_long_name();
    *total_passed += passed;
    *total_failed += failed;
}
