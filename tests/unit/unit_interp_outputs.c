/* Unit tests of interp/outputs.c: a kernel's iopub messages as the NDJSON
 * lines @e2b/code-interpreter reads (decision 0088). */
#include "check.h"
#include "outputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void unit_interp_outputs(int *total_passed, int *total_failed);

CHECK_COUNTERS;

/* The line for (type, content as JSON text), as compact JSON text ("" for
 * none), in out. */
static const char *line_of(const char *type, const char *content, char *out, size_t cap)
{
    json_t *c = json_loads(content, 0, NULL), *line = outputs_line(type, c);
    char *text = line ? json_dumps(line, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    snprintf(out, cap, "%s", text ? text : "");
    free(text);
    json_decref(line);
    json_decref(c);
    return out;
}

static int says(const char *type, const char *content, const char *want)
{
    char got[1024];

    line_of(type, content, got, sizeof(got));
    if (strcmp(got, want) != 0)
        fprintf(stderr, "  %s %s: %s, not %s\n", type, content, got, want);
    return strcmp(got, want) == 0;
}

static void test_streams(void)
{
    CHECK(says("stream", "{\"name\":\"stdout\",\"text\":\"hi\\n\"}",
               "{\"text\":\"hi\\n\",\"type\":\"stdout\"}"));
    CHECK(says("stream", "{\"name\":\"stderr\",\"text\":\"oops\"}",
               "{\"text\":\"oops\",\"type\":\"stderr\"}"));
    CHECK(says("stream", "{\"name\":\"stdout\"}", ""));
    CHECK(says("stream", "{\"text\":\"no name\"}", ""));
}

static void test_results(void)
{
    CHECK(
        says("execute_result",
             "{\"execution_count\":3,\"data\":{\"text/plain\":\"2\",\"text/html\":\"<b>2</b>\"}}",
             "{\"html\":\"<b>2</b>\",\"is_main_result\":true,\"text\":\"2\",\"type\":\"result\"}"));
    CHECK(says("display_data",
               "{\"data\":{\"image/png\":\"iVBOR\",\"" OUTPUTS_CHART_MIME "\":{\"type\":\"line\"},"
               "\"application/vnd.plotly.v1+json\":{\"x\":1}}}",
               "{\"application/vnd.plotly.v1+json\":{\"x\":1},\"chart\":{\"type\":\"line\"},"
               "\"is_main_result\":false,\"png\":\"iVBOR\",\"type\":\"result\"}"));
    /* a format named like the line's own keys changes neither */
    CHECK(says("display_data", "{\"data\":{\"type\":\"stdout\",\"is_main_result\":true}}",
               "{\"is_main_result\":false,\"type\":\"result\"}"));
    CHECK(says("execute_result", "{\"data\":[1]}", ""));
}

static void test_errors_and_others(void)
{
    CHECK(
        says("error",
             "{\"ename\":\"ZeroDivisionError\",\"evalue\":\"division by zero\","
             "\"traceback\":[\"Traceback\",\"  line 1\",\"ZeroDivisionError: division by zero\"]}",
             "{\"name\":\"ZeroDivisionError\",\"traceback\":\"Traceback\\n  line "
             "1\\nZeroDivisionError: division by zero\",\"type\":\"error\",\"value\":\"division by "
             "zero\"}"));
    CHECK(says("error", "{}",
               "{\"name\":\"Error\",\"traceback\":\"\",\"type\":\"error\",\"value\":\"\"}"));
    CHECK(says("status", "{\"execution_state\":\"idle\"}", ""));
    CHECK(says("execute_input", "{\"code\":\"1\"}", ""));
    {
        json_t *n = outputs_count(7);
        char *text = json_dumps(n, JSON_COMPACT | JSON_SORT_KEYS);
        CHECK(strcmp(text, "{\"execution_count\":7,\"type\":\"number_of_executions\"}") == 0);
        free(text);
        json_decref(n);
    }
}

void unit_interp_outputs(int *total_passed, int *total_failed)
{
    test_streams();
    test_results();
    test_errors_and_others();
    *total_passed += passed;
    *total_failed += failed;
}
