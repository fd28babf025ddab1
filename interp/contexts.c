#include "contexts.h"

#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct context *table[CONTEXTS_MAX];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* the table, not a run */
static char files_dir[256], home[256];
static long start_ms = 30000;

static const char *const languages[] = {"python", "r", "bash", "js", "ts"};

void contexts_init(const char *dir, const char *default_cwd, long wait_ms)
{
    snprintf(files_dir, sizeof(files_dir), "%s", dir);
    snprintf(home, sizeof(home), "%s", default_cwd);
    start_ms = wait_ms;
}

static int known(const char *lang)
{
    for (size_t i = 0; i < sizeof(languages) / sizeof(languages[0]); i++)
        if (strcmp(lang, languages[i]) == 0)
            return 1;
    return 0;
}

static json_t *info_of(const struct context *c)
{
    return json_pack("{s:s, s:s, s:s}", "id", c->id, "language", c->k.lang, "cwd", c->k.cwd);
}

/* A context, its kernel not started: its slot taken in the table. */
static struct context *add(const char *lang, const char *cwd, int is_default)
{
    struct context *c = calloc(1, sizeof(*c));
    int slot = -1;

    if (!c || secret_random_hex(c->id, CONTEXT_ID_HEX / 2) != 0) {
        free(c);
        return NULL;
    }
    c->is_default = is_default;
    c->refs = 1; /* the creator's */
    snprintf(c->k.lang, sizeof(c->k.lang), "%s", lang);
    snprintf(c->k.cwd, sizeof(c->k.cwd), "%s", cwd);
    pthread_mutex_init(&c->run, NULL);
    pthread_mutex_lock(&mu);
    for (int i = 0; i < CONTEXTS_MAX && slot < 0; i++)
        if (!table[i])
            table[slot = i] = c;
    pthread_mutex_unlock(&mu);
    if (slot < 0) {
        pthread_mutex_destroy(&c->run);
        free(c);
        return NULL;
    }
    return c;
}

/* c given back; freed when it was removed and this was its last holder. */
static void put(struct context *c)
{
    int last;

    pthread_mutex_lock(&mu);
    last = --c->refs == 0 && c->removed;
    pthread_mutex_unlock(&mu);
    if (last) {
        pthread_mutex_destroy(&c->run);
        free(c);
    }
}

/* c out of the table, its kernel stopped; c->run held by the caller, who
 * still holds a reference. */
static void retire(struct context *c)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < CONTEXTS_MAX; i++)
        if (table[i] == c)
            table[i] = NULL;
    c->removed = 1;
    pthread_mutex_unlock(&mu);
    kernel_stop(&c->k);
}

/* c's kernel (re)started in its lang and cwd, c->run held. */
static int start(struct context *c, char *err, size_t errlen)
{
    char lang[KERNEL_LANG_MAX], cwd[sizeof(c->k.cwd)];

    snprintf(lang, sizeof(lang), "%s", c->k.lang);
    snprintf(cwd, sizeof(cwd), "%s", c->k.cwd);
    return kernel_start(&c->k, lang, cwd, files_dir, start_ms, err, errlen);
}

int contexts_create(const char *lang, const char *cwd, json_t **info, int *status, char *err,
                    size_t errlen)
{
    struct context *c;
    int rc = 0;

    if (!known(lang)) {
        *status = 400;
        snprintf(err, errlen, "language '%s' is not one of python, r, bash, js, ts", lang);
        return -1;
    }
    *status = 503;
    if (!(c = add(lang, cwd && cwd[0] ? cwd : home, 0))) {
        snprintf(err, errlen, "no room for another context (at most %d)", CONTEXTS_MAX);
        return -1;
    }
    pthread_mutex_lock(&c->run);
    if (start(c, err, errlen) != 0) {
        retire(c);
        rc = -1;
    } else {
        *info = info_of(c);
    }
    pthread_mutex_unlock(&c->run);
    put(c);
    return rc;
}

/* The context id, or lang's default one, held (put when done); NULL. */
static struct context *find(const char *id, const char *lang)
{
    struct context *c = NULL;

    pthread_mutex_lock(&mu);
    for (int i = 0; i < CONTEXTS_MAX && !c; i++)
        if (table[i] && (id ? strcmp(table[i]->id, id) == 0
                            : table[i]->is_default && strcmp(table[i]->k.lang, lang) == 0))
            c = table[i];
    if (c)
        c->refs++;
    pthread_mutex_unlock(&mu);
    return c;
}

/* lang's default context, made now when there is none. Two callers at once
 * may both make one: the one in the lower slot of the table stays, the
 * other is ended and its caller takes the first. */
static struct context *default_of(const char *lang)
{
    struct context *c = find(NULL, lang);
    int mine = -1, first = CONTEXTS_MAX;

    if (c)
        return c;
    if (!(c = add(lang, home, 1)))
        return NULL;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < CONTEXTS_MAX; i++) {
        if (table[i] == c)
            mine = i;
        else if (table[i] && table[i]->is_default && strcmp(table[i]->k.lang, lang) == 0 &&
                 i < first)
            first = i;
    }
    pthread_mutex_unlock(&mu);
    if (first > mine)
        return c;
    pthread_mutex_lock(&c->run);
    retire(c);
    pthread_mutex_unlock(&c->run);
    put(c);
    return find(NULL, lang);
}

struct context *contexts_acquire(const char *id, const char *lang, int *status, char *err,
                                 size_t errlen)
{
    struct context *c;

    if (!id && !known(lang)) {
        *status = 400;
        snprintf(err, errlen, "language '%s' is not one of python, r, bash, js, ts", lang);
        return NULL;
    }
    c = id ? find(id, "") : default_of(lang);
    if (!c) {
        *status = id ? 404 : 503;
        snprintf(err, errlen, id ? "context %s not found" : "no room for another context", id);
        return NULL;
    }
    pthread_mutex_lock(&c->run);
    *status = 503;
    if (c->removed) {
        *status = 404;
        snprintf(err, errlen, "context %s not found", c->id);
    } else if (c->k.pid > 0 || start(c, err, errlen) == 0) {
        return c; /* a dead kernel is started afresh: its state is gone */
    }
    pthread_mutex_unlock(&c->run);
    put(c);
    return NULL;
}

void contexts_release(struct context *c)
{
    pthread_mutex_unlock(&c->run);
    put(c);
}

json_t *contexts_list(void)
{
    json_t *list = json_array();

    pthread_mutex_lock(&mu);
    for (int i = 0; i < CONTEXTS_MAX; i++)
        if (table[i])
            json_array_append_new(list, info_of(table[i]));
    pthread_mutex_unlock(&mu);
    return list;
}

int contexts_remove(const char *id)
{
    struct context *c = find(id, "");

    if (!c)
        return -1;
    pthread_mutex_lock(&c->run);
    retire(c);
    pthread_mutex_unlock(&c->run);
    put(c);
    return 0;
}

int contexts_restart(const char *id, char *err, size_t errlen)
{
    struct context *c = find(id, "");
    int rc;

    if (!c) {
        snprintf(err, errlen, "context %s not found", id);
        return -1;
    }
    pthread_mutex_lock(&c->run);
    kernel_stop(&c->k);
    rc = c->removed ? -1 : start(c, err, errlen);
    pthread_mutex_unlock(&c->run);
    put(c);
    return rc;
}

void contexts_stop_all(void)
{
    for (int i = 0; i < CONTEXTS_MAX; i++) {
        struct context *c = NULL;

        pthread_mutex_lock(&mu);
        if (table[i])
            (c = table[i])->refs++;
        pthread_mutex_unlock(&mu);
        if (!c)
            continue;
        pthread_mutex_lock(&c->run);
        retire(c);
        pthread_mutex_unlock(&c->run);
        put(c);
    }
}
