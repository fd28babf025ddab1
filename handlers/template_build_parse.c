/* template_build_parse.c: a template build's steps, checked at the edge. */
#include "template_build_parse.h"

#include "registry_names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int spelled(const char *s, size_t max, const char *first, const char *rest)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > max || !strchr(first, s[0]))
        return 0;
    return strspn(s + 1, rest) == n - 1;
}

#define LOWER "abcdefghijklmnopqrstuvwxyz0123456789"
#define MIXED LOWER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

int template_name_ok(const char *s)
{
    return spelled(s, 128, LOWER, LOWER "._-");
}

int template_tag_ok(const char *s)
{
    return spelled(s, 63, MIXED, MIXED "._-");
}

int template_hash_ok(const char *s)
{
    return s && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

static int user_ok(const char *s)
{
    return spelled(s, 32, "abcdefghijklmnopqrstuvwxyz_", "abcdefghijklmnopqrstuvwxyz0123456789_-");
}

static int env_name_ok(const char *s)
{
    return spelled(s, 128, MIXED "_", MIXED "_") && !isdigit((unsigned char)s[0]);
}

/* args: an array of at least min and at most max strings, none with a NUL. */
static int args_ok(json_t *args, size_t min, size_t max)
{
    size_t i, n = json_array_size(args);
    json_t *a;

    if (!json_is_array(args) || n < min || n > max)
        return 0;
    json_array_foreach(args, i, a)
    {
        if (!json_is_string(a) || json_string_length(a) > 65536 ||
            strlen(json_string_value(a)) != json_string_length(a))
            return 0;
    }
    return 1;
}

static const char *arg(json_t *args, size_t i)
{
    const char *s = json_string_value(json_array_get(args, i));
    return s ? s : "";
}

/* One step, against the USER and WORKDIR so far. NULL, or what is wrong. */
static const char *step_check(json_t *st, struct template_build_req *out)
{
    const char *type = json_string_value(json_object_get(st, "type"));
    json_t *args = json_object_get(st, "args"), *force = json_object_get(st, "force");

    if (!json_is_object(st) || !type)
        return "must be an object with a type";
    if (force && !json_is_boolean(force))
        return "force: must be a boolean";
    if (strcmp(type, "RUN") == 0)
        return !args_ok(args, 1, 2) || !*arg(args, 0) ? "RUN: args are [command] or [command, user]"
               : json_array_size(args) == 2 && *arg(args, 1) && !user_ok(arg(args, 1))
                   ? "RUN: the user is not a user name"
                   : NULL;
    if (strcmp(type, "COPY") == 0) {
        out->n_copy++;
        if (!args_ok(args, 2, 4) || !*arg(args, 0) || !*arg(args, 1))
            return "COPY: args are [src, dest, user, mode]";
        if (*arg(args, 2) && !user_ok(arg(args, 2)))
            return "COPY: the user is not a user name";
        if (*arg(args, 3) && strspn(arg(args, 3), "01234567") != strlen(arg(args, 3)))
            return "COPY: the mode is not octal";
        return template_hash_ok(json_string_value(json_object_get(st, "filesHash")))
                   ? NULL
                   : "COPY: filesHash must be 64 hex digits";
    }
    if (strcmp(type, "ENV") == 0) {
        if (!args_ok(args, 2, 512) || json_array_size(args) % 2)
            return "ENV: args are name, value pairs";
        for (size_t i = 0; i < json_array_size(args); i += 2)
            if (!env_name_ok(arg(args, i)))
                return "ENV: a name is not a variable name";
        return NULL;
    }
    if (strcmp(type, "WORKDIR") == 0) {
        if (!args_ok(args, 1, 1) || arg(args, 0)[0] != '/' || strlen(arg(args, 0)) > 255)
            return "WORKDIR: args are [an absolute path]";
        snprintf(out->workdir, sizeof(out->workdir), "%s", arg(args, 0));
        return NULL;
    }
    if (strcmp(type, "USER") == 0) {
        if (!args_ok(args, 1, 1) || !user_ok(arg(args, 0)))
            return "USER: args are [a user name]";
        snprintf(out->user, sizeof(out->user), "%s", arg(args, 0));
        return NULL;
    }
    return "type: must be RUN, COPY, ENV, WORKDIR or USER";
}

static int steps_check(json_t *steps, struct template_build_req *out, char *err, size_t errlen)
{
    size_t i;
    json_t *st;

    if (steps && (!json_is_array(steps) || json_array_size(steps) > TEMPLATE_STEPS_MAX)) {
        snprintf(err, errlen, "steps: must be an array of at most %d steps", TEMPLATE_STEPS_MAX);
        return -1;
    }
    json_array_foreach(steps, i, st)
    {
        const char *why = step_check(st, out);
        if (why) {
            snprintf(err, errlen, "steps[%zu]: %s", i, why);
            return -1;
        }
    }
    out->steps = steps ? json_incref(steps) : json_array();
    return 0;
}

/* Corral's local names and loopback registries are not a base a tenant may
 * name: they may be another workspace's. */
static int image_local(const char *image)
{
    return strncmp(image, "corral", 6) == 0 || strncmp(image, "localhost", 9) == 0 ||
           strncmp(image, "127.", 4) == 0;
}

/* An image of Corral's own registry ("<registry>/corral/w<ws>/<tpl>[:tag|@digest]",
 * as a Dockerfile's FROM names a template) becomes that template, its
 * workspace kept for the caller to check: 1, 0 not the registry's, -1 not a
 * template's name. */
static int registry_template(struct template_build_req *out, const char *registry)
{
    size_t r = registry ? strlen(registry) : 0;
    char repo[REGISTRY_REPO_MAX], tpl[49];
    const char *p = out->from_image + r, *slash, *end;

    if (!r || strncmp(out->from_image, registry, r) != 0 || *p != '/')
        return 0;
    p++;
    slash = strrchr(p, '/');
    end = strchr(p, '@');
    if (!end && slash && strchr(slash, ':'))
        end = strchr(slash, ':');
    if (!end)
        end = p + strlen(p);
    if ((size_t)(end - p) >= sizeof(repo))
        return -1;
    snprintf(repo, sizeof(repo), "%.*s", (int)(end - p), p);
    if (registry_repo_parse(repo, out->registry_ws, tpl) != 0)
        return -1;
    snprintf(out->from_template, sizeof(out->from_template), "%s", tpl);
    out->from_image[0] = '\0';
    out->from_registry = 1;
    return 1;
}

static int text_field(json_t *body, const char *name, char *out, size_t len, char *err,
                      size_t errlen)
{
    json_t *v = json_object_get(body, name);

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v) || json_string_length(v) >= len ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        snprintf(err, errlen, "%s: must be a string of at most %zu bytes", name, len - 1);
        return -1;
    }
    snprintf(out, len, "%s", json_string_value(v));
    return 0;
}

static int base_check(struct template_build_req *out, const char *registry, char *err,
                      size_t errlen)
{
    if (!*out->from_template == !*out->from_image) {
        snprintf(err, errlen, "one of fromTemplate and fromImage is required");
        return -1;
    }
    if (*out->from_image && registry_template(out, registry) < 0) {
        snprintf(err, errlen, "fromImage: '%s' names no template of Corral's registry",
                 out->from_image);
        return -1;
    }
    if (*out->from_image && (image_local(out->from_image) || strpbrk(out->from_image, " \t\n"))) {
        snprintf(err, errlen,
                 "fromImage: '%s' is not an image a build may start from (Corral's own images "
                 "are named by fromTemplate)",
                 out->from_image);
        return -1;
    }
    return 0;
}

int template_build_parse(json_t *body, const char *registry, struct template_build_req *out,
                         char *err, size_t errlen)
{
    json_t *force = json_object_get(body, "force");

    memset(out, 0, sizeof(*out));
    snprintf(out->user, sizeof(out->user), "user");
    snprintf(out->workdir, sizeof(out->workdir), "/home/user");
    if (json_object_get(body, "fromImageRegistry") &&
        !json_is_null(json_object_get(body, "fromImageRegistry"))) {
        snprintf(err, errlen, "fromImageRegistry: registry credentials are not supported");
        return -1;
    }
    if (force && !json_is_boolean(force)) {
        snprintf(err, errlen, "force: must be a boolean");
        return -1;
    }
    out->force = json_is_true(force);
    if (text_field(body, "fromTemplate", out->from_template, sizeof(out->from_template), err,
                   errlen) ||
        text_field(body, "fromImage", out->from_image, sizeof(out->from_image), err, errlen) ||
        text_field(body, "startCmd", out->start_cmd, sizeof(out->start_cmd), err, errlen) ||
        text_field(body, "readyCmd", out->ready_cmd, sizeof(out->ready_cmd), err, errlen) ||
        base_check(out, registry, err, errlen))
        return -1;
    return steps_check(json_object_get(body, "steps"), out, err, errlen);
}

static int tags_check(json_t *tags, char *err, size_t errlen)
{
    size_t i;
    json_t *t;

    if (tags && (!json_is_array(tags) || json_array_size(tags) > 16)) {
        snprintf(err, errlen, "tags: must be an array of at most 16 tags");
        return -1;
    }
    json_array_foreach(tags, i, t)
    {
        if (!template_tag_ok(json_string_value(t))) {
            snprintf(err, errlen, "tags[%zu]: a tag is 1-63 of [A-Za-z0-9._-]", i);
            return -1;
        }
    }
    return 0;
}

static int size_field(json_t *body, const char *name, long max, long *out, char *err, size_t errlen)
{
    json_t *v = json_object_get(body, name);

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max) {
        snprintf(err, errlen, "%s: must be an integer from 1 to %ld", name, max);
        return -1;
    }
    *out = (long)json_integer_value(v);
    return 0;
}

int template_name_parse(json_t *body, struct template_name_req *out, char *err, size_t errlen)
{
    char full[200] = "";
    const char *colon;

    memset(out, 0, sizeof(*out));
    if (text_field(body, "name", full, sizeof(full), err, errlen) ||
        (!*full && text_field(body, "alias", full, sizeof(full), err, errlen)))
        return -1;
    colon = strchr(full, ':');
    snprintf(out->name, sizeof(out->name), "%.*s", colon ? (int)(colon - full) : 128, full);
    snprintf(out->tag, sizeof(out->tag), "%s", colon ? colon + 1 : "default");
    if (!template_name_ok(out->name) || !template_tag_ok(out->tag)) {
        snprintf(err, errlen,
                 "name: a template name is 1-128 of [a-z0-9._-], starting with a "
                 "letter or digit, with an optional :tag");
        return -1;
    }
    if (tags_check(json_object_get(body, "tags"), err, errlen) ||
        size_field(body, "cpuCount", 64, &out->cpu, err, errlen) ||
        size_field(body, "memoryMB", 262144, &out->memory_mb, err, errlen))
        return -1;
    out->tags =
        json_object_get(body, "tags") ? json_incref(json_object_get(body, "tags")) : json_array();
    return 0;
}
