#include "transform_audit.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMES_LEN (RULE_HEADERS_MAX * (RULE_NAME_MAX + 1) + 1)

struct entry {
    char host[256], names[NAMES_LEN]; /* names comma-separated, in the rule's order */
    long long count;
};

static struct {
    pthread_mutex_t mu;
    struct entry e[AUDIT_ENTRIES_MAX];
    int n;
    long long dropped;
} tab = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Adds count to (host, names), or to dropped when the table is full. */
static void add(const char *host, const char *names, long long count)
{
    pthread_mutex_lock(&tab.mu);
    int i = 0;
    while (i < tab.n && (strcmp(tab.e[i].host, host) != 0 || strcmp(tab.e[i].names, names) != 0))
        i++;
    if (i == tab.n && tab.n < AUDIT_ENTRIES_MAX) {
        snprintf(tab.e[i].host, sizeof(tab.e[i].host), "%s", host);
        snprintf(tab.e[i].names, sizeof(tab.e[i].names), "%s", names);
        tab.e[i].count = 0;
        tab.n++;
    }
    if (i < tab.n)
        tab.e[i].count += count;
    else
        tab.dropped += count;
    pthread_mutex_unlock(&tab.mu);
}

void transform_audit_note(const char *host, const struct rule_set *set)
{
    char names[NAMES_LEN];
    size_t len = 0;

    names[0] = '\0';
    for (size_t i = 0; i < set->n && len < sizeof(names); i++)
        len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? "," : "",
                                set->h[i].name);
    add(host, names, 1);
}

/* "A,B" as ["A", "B"]. */
static json_t *name_list(const char *names)
{
    json_t *a = json_array();

    for (const char *p = names; a && *p;) {
        size_t n = strcspn(p, ",");
        json_array_append_new(a, json_stringn(p, n));
        p += n + (p[n] == ',');
    }
    return a;
}

char *transform_audit_take(void)
{
    json_t *list = json_array(), *line;
    long long dropped;
    char *text = NULL;

    pthread_mutex_lock(&tab.mu);
    for (int i = 0; i < tab.n; i++)
        json_array_append_new(list, json_pack("{s:s, s:o, s:I}", "host", tab.e[i].host, "headers",
                                              name_list(tab.e[i].names), "count",
                                              (json_int_t)tab.e[i].count));
    dropped = tab.dropped;
    tab.n = 0;
    tab.dropped = 0;
    pthread_mutex_unlock(&tab.mu);
    if (json_array_size(list) == 0 && dropped == 0) {
        json_decref(list);
        return NULL;
    }
    line = json_pack("{s:o}", "audit", list);
    if (dropped)
        json_object_set_new(line, "dropped", json_integer(dropped));
    text = line ? json_dumps(line, JSON_COMPACT) : NULL;
    json_decref(line);
    return text;
}

void transform_audit_return(const char *text)
{
    json_t *line = json_loads(text, 0, NULL), *e;
    size_t i;

    json_array_foreach(json_object_get(line, "audit"), i, e)
    {
        json_t *h = json_object_get(e, "headers"), *n;
        char names[NAMES_LEN];
        size_t len = 0, k;

        names[0] = '\0';
        json_array_foreach(h, k, n)
        {
            if (len < sizeof(names))
                len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", k ? "," : "",
                                        json_string_value(n));
        }
        add(json_string_value(json_object_get(e, "host")), names,
            (long long)json_integer_value(json_object_get(e, "count")));
    }
    pthread_mutex_lock(&tab.mu);
    tab.dropped += (long long)json_integer_value(json_object_get(line, "dropped"));
    pthread_mutex_unlock(&tab.mu);
    json_decref(line);
}
