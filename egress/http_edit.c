#include "http_edit.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool named(const char *line, size_t name_len, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) == name_len && strncasecmp(line, names[i], name_len) == 0)
            return true;
    return false;
}

static void put(char *out, size_t *len, const char *s, size_t n)
{
    memcpy(out + *len, s, n);
    *len += n;
}

char *http_head_set(const char *head, size_t head_len, const char *const *names,
                    const char *const *values, size_t n, size_t *out_len)
{
    size_t cap = head_len, len = 0;
    const char *end = head + head_len - 2; /* the blank line */
    const char *line = memmem(head, head_len, "\r\n", 2);

    if (!line || head_len < 4)
        return NULL; /* not a head: http_head_parse never passes one */
    line += 2;
    for (size_t i = 0; i < n; i++)
        cap += strlen(names[i]) + 2 + strlen(values[i]) + 2;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    put(out, &len, head, (size_t)(line - head));
    while (line < end) {
        const char *eol = memmem(line, (size_t)(end - line) + 2, "\r\n", 2);
        if (!eol)
            break;
        const char *colon = memchr(line, ':', (size_t)(eol - line));
        if (!colon || !named(line, (size_t)(colon - line), names, n))
            put(out, &len, line, (size_t)(eol - line) + 2);
        line = eol + 2;
    }
    for (size_t i = 0; i < n; i++) {
        put(out, &len, names[i], strlen(names[i]));
        put(out, &len, ": ", 2);
        put(out, &len, values[i], strlen(values[i]));
        put(out, &len, "\r\n", 2);
    }
    put(out, &len, "\r\n", 2);
    *out_len = len;
    return out;
}
