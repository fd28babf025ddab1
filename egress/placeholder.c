#include "placeholder.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "${e2b."

static const struct {
    const char *lead; /* after "${" */
    enum ph_kind kind;
} forms[] = {{"e2b.secrets.", PH_SECRET}, {"e2b.identity.tokens.", PH_TOKEN}};

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

/* At p, which starts with "${e2b.": the placeholder's length (through "}"),
 * or 0 when malformed. */
static size_t one(const char *p, struct ph_ref *ref)
{
    for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
        size_t ll = strlen(forms[f].lead);
        if (strncmp(p + 2, forms[f].lead, ll) != 0)
            continue;
        const char *n = p + 2 + ll;
        size_t len = 0;
        while (len <= PH_NAME_MAX && name_char(n[len]))
            len++;
        if (len == 0 || len > PH_NAME_MAX || n[len] != '}')
            return 0;
        ref->kind = forms[f].kind;
        memcpy(ref->name, n, len);
        ref->name[len] = '\0';
        return 2 + ll + len + 1;
    }
    return 0;
}

int ph_scan(const char *v, struct ph_ref *refs, size_t max)
{
    size_t n = 0;

    for (const char *p = strstr(v, PREFIX); p; p = strstr(p, PREFIX)) {
        struct ph_ref r;
        size_t len = one(p, &r);
        if (len == 0 || n == max)
            return -1;
        refs[n++] = r;
        p += len;
    }
    return (int)n;
}

/* Appends s[0..n) to the growing *out. */
static bool append(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (!*out || *len + n + 1 > *cap) {
        size_t want = (*len + n + 1) * 2;
        char *grown = realloc(*out, want);
        if (!grown)
            return false;
        *out = grown;
        *cap = want;
    }
    memcpy(*out + *len, s, n);
    *len += n;
    (*out)[*len] = '\0';
    return true;
}

char *ph_expand(const char *v, ph_lookup lookup, void *ctx, struct ph_ref *missing)
{
    char *out = NULL;
    size_t len = 0, cap = 0;
    const char *p = v, *at;

    missing->name[0] = '\0';
    while ((at = strstr(p, PREFIX))) {
        struct ph_ref r;
        size_t plen = one(at, &r);
        const char *val = plen ? lookup(ctx, r.kind, r.name) : NULL;
        if (!val) {
            if (plen)
                *missing = r;
            free(out);
            return NULL;
        }
        if (!append(&out, &len, &cap, p, (size_t)(at - p)) ||
            !append(&out, &len, &cap, val, strlen(val)))
            goto oom;
        p = at + plen;
    }
    if (append(&out, &len, &cap, p, strlen(p)))
        return out;
oom:
    free(out);
    missing->name[0] = '\0';
    return NULL;
}

const char *ph_kind_key(enum ph_kind kind)
{
    return kind == PH_SECRET ? "secrets" : "tokens";
}
