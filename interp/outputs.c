#include "outputs.h"

#include <stdlib.h>
#include <string.h>

/* A MIME type and the key the package reads it under. */
static const struct {
    const char *mime, *key;
} formats[] = {
    {"text/plain", "text"},        {"text/html", "html"},
    {"text/markdown", "markdown"}, {"image/svg+xml", "svg"},
    {"image/png", "png"},          {"image/jpeg", "jpeg"},
    {"application/pdf", "pdf"},    {"text/latex", "latex"},
    {"application/json", "json"},  {"application/javascript", "javascript"},
    {OUTPUTS_CHART_MIME, "chart"}, {OUTPUTS_DATA_MIME, "data"},
};

static const char *key_of(const char *mime)
{
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (strcmp(formats[i].mime, mime) == 0)
            return formats[i].key;
    return mime; /* kept under its own name: the package's "extra" */
}

/* execute_result (main) or display_data: every format of content.data. */
static json_t *result(const json_t *content, int main)
{
    json_t *data = json_object_get(content, "data"), *line, *v;
    const char *mime;

    if (!json_is_object(data))
        return NULL;
    line = json_pack("{s:s, s:b}", "type", "result", "is_main_result", main);
    json_object_foreach(data, mime, v)
    {
        if (line && strcmp(key_of(mime), "type") != 0 &&
            strcmp(key_of(mime), "is_main_result") != 0)
            json_object_set(line, key_of(mime), v);
    }
    return line;
}

/* The traceback's frames joined with newlines, as the package shows one
 * text; the caller frees. */
static char *joined(const json_t *tb)
{
    size_t i, len = 0, at = 0;
    json_t *frame;
    char *text;

    json_array_foreach(tb, i, frame) len += json_string_length(frame) + 1;
    text = calloc(len + 1, 1);
    if (!text)
        return NULL;
    json_array_foreach(tb, i, frame)
    {
        size_t n = json_string_length(frame);

        if (!json_is_string(frame))
            continue;
        if (at)
            text[at++] = '\n';
        memcpy(text + at, json_string_value(frame), n);
        at += n;
    }
    return text;
}

static json_t *error(const json_t *content)
{
    const char *name = json_string_value(json_object_get(content, "ename"));
    const char *value = json_string_value(json_object_get(content, "evalue"));
    char *text = joined(json_object_get(content, "traceback"));
    json_t *line;

    if (!text)
        return NULL;
    line = json_pack("{s:s, s:s, s:s, s:s}", "type", "error", "name", name ? name : "Error",
                     "value", value ? value : "", "traceback", text);
    free(text);
    return line;
}

json_t *outputs_line(const char *msg_type, const json_t *content)
{
    if (strcmp(msg_type, "stream") == 0) {
        const char *name = json_string_value(json_object_get(content, "name"));
        const char *text = json_string_value(json_object_get(content, "text"));

        if (!name || !text)
            return NULL;
        return json_pack("{s:s, s:s}", "type", strcmp(name, "stderr") == 0 ? "stderr" : "stdout",
                         "text", text);
    }
    if (strcmp(msg_type, "execute_result") == 0)
        return result(content, 1);
    if (strcmp(msg_type, "display_data") == 0)
        return result(content, 0);
    if (strcmp(msg_type, "error") == 0)
        return error(content);
    return NULL;
}

json_t *outputs_count(long long n)
{
    return json_pack("{s:s, s:I}", "type", "number_of_executions", "execution_count",
                     (json_int_t)n);
}
