#include "volume_req.h"

#include "url_decode.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int volume_path_normalise(const char *in, char *out, size_t len, const char **why)
{
    size_t o = 0;

    out[0] = '\0';
    for (const char *p = in; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            *why = "path: '..' is not allowed (paths are inside the volume)";
            return -1;
        }
        if (n > 0 && !(n == 1 && p[0] == '.')) {
            if (o + (o > 0) + n >= len) {
                *why = "path: too long";
                return -1;
            }
            if (o > 0)
                out[o++] = '/';
            memcpy(out + o, p, n);
            o += n;
            out[o] = '\0';
        }
        p += n + (p[n] == '/');
    }
    return 0;
}

/* One decimal in [lo, hi] into *v; 0 or -1. */
static int number(const char *s, long lo, long hi, long *v)
{
    char *end;
    long x;

    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 10)
        return -1;
    x = strtol(s, &end, 10);
    if (x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

/* Which parameters an operation takes, besides path. */
static int takes(enum volume_op op, const char *name)
{
    if (!strcmp(name, "depth"))
        return op == VOP_LIST;
    if (!strcmp(name, "uid") || !strcmp(name, "gid") || !strcmp(name, "mode") ||
        !strcmp(name, "force"))
        return op == VOP_MKDIR || op == VOP_WRITE;
    return 0;
}

static int param(struct volume_req *r, const char *name, const char *value, char *why,
                 size_t whylen)
{
    const char *pwhy = NULL;
    int bad = 0;

    if (!strcmp(name, "path")) {
        if (!*value) {
            snprintf(why, whylen, "path: must not be empty");
            return -1;
        }
        if (volume_path_normalise(value, r->path, sizeof(r->path), &pwhy) != 0) {
            snprintf(why, whylen, "%s", pwhy);
            return -1;
        }
        return 0;
    }
    if (!takes(r->op, name)) {
        snprintf(why, whylen, "unknown query parameter '%.40s' for this operation", name);
        return -1;
    }
    if (!strcmp(name, "depth"))
        bad = number(value, 1, VOLUME_DEPTH_MAX, &r->depth);
    else if (!strcmp(name, "uid"))
        bad = number(value, 0, VOLUME_UGID_MAX, &r->uid);
    else if (!strcmp(name, "gid"))
        bad = number(value, 0, VOLUME_UGID_MAX, &r->gid);
    else if (!strcmp(name, "mode"))
        bad = number(value, 0, VOLUME_MODE_MAX, &r->mode);
    else if (!strcmp(value, "true") || !strcmp(value, "false"))
        r->force = !strcmp(value, "true");
    else
        bad = -1;
    if (bad)
        snprintf(why, whylen, "%s: %s", name,
                 !strcmp(name, "depth") ? "an integer from 1 to 64"
                 : !strcmp(name, "mode")
                     ? "an integer from 0 to 511 (0777: no setuid, setgid or sticky bit)"
                 : !strcmp(name, "force") ? "true or false"
                                          : "an integer from 0 to 2147483646");
    return bad;
}

static int parse_query(const char *q, size_t n, struct volume_req *r, char *why, size_t whylen)
{
    char seen[6][16] = {{0}}, name[16], *value = malloc(VOLUME_PATH_MAX * 3 + 1);
    int has_path = 0, nseen = 0, rc = 0;

    if (!value) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n && rc == 0;) {
        size_t len = 0, eq;
        while (i + len < n && q[i + len] != '&')
            len++;
        eq = 0;
        while (eq < len && q[i + eq] != '=')
            eq++;
        if (len == 0) {
            i++;
            continue;
        }
        if (eq >= sizeof(name) || url_decode(q + i, eq, name, sizeof(name)) != 0 ||
            memmem(q + i, len, "%00", 3) ||
            url_decode(q + i + eq + (eq < len), len - eq - (eq < len), value,
                       VOLUME_PATH_MAX * 3 + 1) != 0) {
            snprintf(why, whylen, "malformed query parameter");
            rc = -1;
            break;
        }
        for (int k = 0; k < nseen; k++)
            if (!strcmp(seen[k], name)) {
                snprintf(why, whylen, "%.15s: given twice", name);
                rc = -1;
            }
        if (rc == 0 && nseen < 6)
            memcpy(seen[nseen++], name, sizeof(name));
        if (rc == 0)
            rc = param(r, name, value, why, whylen);
        has_path |= !strcmp(name, "path");
        i += len + 1;
    }
    free(value);
    if (rc == 0 && !has_path) {
        snprintf(why, whylen, "path: required");
        rc = -1;
    }
    return rc;
}

/* The operation of method on kind ("path", "dir", "file"); 404/405 else. */
static int operation(const char *method, size_t mlen, const char *kind, size_t klen,
                     enum volume_op *op)
{
    static const struct {
        const char *method, *kind;
        enum volume_op op;
    } table[] = {
        {"GET", "path", VOP_STAT},  {"PATCH", "path", VOP_SET_META}, {"DELETE", "path", VOP_REMOVE},
        {"GET", "dir", VOP_LIST},   {"POST", "dir", VOP_MKDIR},      {"GET", "file", VOP_READ},
        {"PUT", "file", VOP_WRITE},
    };
    int kind_known = 0;

    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (strlen(table[i].kind) != klen || memcmp(table[i].kind, kind, klen) != 0)
            continue;
        kind_known = 1;
        if (strlen(table[i].method) == mlen && memcmp(table[i].method, method, mlen) == 0) {
            *op = table[i].op;
            return 0;
        }
    }
    return kind_known ? 405 : 404;
}

int volume_req_parse(const char *head, size_t len, struct volume_req *out, char *why, size_t whylen)
{
    static const char prefix[] = "/volumecontent/";
    const char *eol = memmem(head, len, "\r\n", 2), *sp, *target, *tend, *id, *kind, *q;
    size_t plen = sizeof(prefix) - 1;
    int rc;

    memset(out, 0, sizeof(*out));
    out->depth = 1;
    out->uid = out->gid = out->mode = -1;
    sp = eol ? memchr(head, ' ', (size_t)(eol - head)) : NULL;
    target = sp ? sp + 1 : NULL;
    tend = target ? memchr(target, ' ', (size_t)(eol - target)) : NULL;
    if (!tend || (size_t)(tend - target) < plen || memcmp(target, prefix, plen) != 0) {
        snprintf(why, whylen, "not a volume file API request");
        return 404;
    }
    id = target + plen;
    kind = memchr(id, '/', (size_t)(tend - id));
    q = memchr(id, '?', (size_t)(tend - id));
    if (!kind || (q && q < kind) || (size_t)(kind - id) >= sizeof(out->volume_id)) {
        snprintf(why, whylen, "not a volume file API request");
        return 404;
    }
    memcpy(out->volume_id, id, (size_t)(kind - id));
    kind++;
    if ((rc = operation(head, (size_t)(sp - head), kind, (size_t)((q ? q : tend) - kind),
                        &out->op)) != 0) {
        snprintf(why, whylen, rc == 404 ? "no such operation" : "method not allowed here");
        return rc;
    }
    if (parse_query(q ? q + 1 : "", q ? (size_t)(tend - q - 1) : 0, out, why, whylen) != 0)
        return 400;
    return 0;
}

int volume_meta_parse(const char *body, size_t len, struct volume_req *r, char *why, size_t whylen)
{
    json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL), *v;
    const char *k;
    int rc = 0;

    if (!json_is_object(j)) {
        snprintf(why, whylen, "the body must be a JSON object {uid, gid, mode}");
        json_decref(j);
        return -1;
    }
    json_object_foreach(j, k, v)
    {
        long *dst = !strcmp(k, "uid")    ? &r->uid
                    : !strcmp(k, "gid")  ? &r->gid
                    : !strcmp(k, "mode") ? &r->mode
                                         : NULL;
        long hi = dst == &r->mode ? VOLUME_MODE_MAX : VOLUME_UGID_MAX;
        if (!dst) {
            snprintf(why, whylen, "unknown field '%.40s': uid, gid and mode are", k);
            rc = -1;
        } else if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > hi) {
            snprintf(why, whylen, "%s: an integer from 0 to %ld", k, hi);
            rc = -1;
        } else {
            *dst = (long)json_integer_value(v);
        }
        if (rc)
            break;
    }
    json_decref(j);
    return rc;
}
