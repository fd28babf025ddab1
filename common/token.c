#include "token.h"

#include <stdio.h>
#include <string.h>

static int is_hex_run(const char *s, size_t n, size_t max)
{
    if (n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int token_is_id(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && is_hex_run(s, n, 32);
}

/* Copies the field [s, end) into out when it is hex of acceptable length. */
static int take(const char *s, const char *end, char *out, size_t max, int may_be_empty)
{
    size_t n = (size_t)(end - s);

    if ((n == 0 && !may_be_empty) || !is_hex_run(s, n, max - 1))
        return -1;
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}

/* Reads two hex digits as a field length of 1..32; -1 otherwise. */
static int field_len(const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *hi, *lo;

    if (!s[0] || !s[1] || !(hi = strchr(hex, s[0])) || !(lo = strchr(hex, s[1])))
        return -1;
    int n = (int)(hi - hex) * 16 + (int)(lo - hex);
    return n >= 1 && n <= 32 ? n : -1;
}

/* e2b_1<LL><ws><LL><id><secret>: lengths make the fields unambiguous without a
 * separator the E2B SDK's ^e2b_[0-9a-f]+$ check would refuse. */
static void parse_e2b(const char *p, struct token *out)
{
    const char *end = p + strlen(p);
    int wl, il;

    if (*p++ != '1' || (wl = field_len(p)) < 0 || end - (p + 2) < wl)
        return;
    p += 2;
    if (take(p, p + wl, out->ws, TOKEN_WS_MAX, 0))
        return;
    p += wl;
    if ((il = field_len(p)) < 0 || end - (p + 2) < il)
        return;
    p += 2;
    if (take(p, p + il, out->id, TOKEN_ID_MAX, 0) ||
        take(p + il, end, out->secret, TOKEN_SECRET_MAX, 0))
        return;
    out->kind = TOKEN_API_KEY;
}

/* <prefix>_<ws>_<id>_<secret>: older API keys (ck_) and join tokens (jn_). */
static void parse_underscored(const char *p, enum token_kind kind, struct token *out)
{
    const char *u1 = strchr(p, '_');
    const char *u2 = u1 ? strchr(u1 + 1, '_') : NULL;

    if (!u2)
        return;
    /* Only join tokens may name the unscoped fleet (an empty workspace). */
    if (take(p, u1, out->ws, TOKEN_WS_MAX, kind == TOKEN_JOIN) ||
        take(u1 + 1, u2, out->id, TOKEN_ID_MAX, 0) ||
        take(u2 + 1, u2 + 1 + strlen(u2 + 1), out->secret, TOKEN_SECRET_MAX, 0))
        return;
    out->kind = kind;
}

void token_parse(const char *text, struct token *out)
{
    memset(out, 0, sizeof(*out));
    if (strncmp(text, "e2b_", 4) == 0)
        parse_e2b(text + 4, out);
    else if (strncmp(text, "ck_", 3) == 0)
        parse_underscored(text + 3, TOKEN_API_KEY, out);
    else if (strncmp(text, "jn_", 3) == 0)
        parse_underscored(text + 3, TOKEN_JOIN, out);
    if (out->kind == TOKEN_INVALID) /* no half-parsed secret left behind */
        memset(out, 0, sizeof(*out));
}

void token_format(enum token_kind kind, const char *ws, const char *id, const char *secret,
                  char *out)
{
    if (kind == TOKEN_JOIN)
        snprintf(out, TOKEN_TEXT_MAX, "jn_%s_%s_%s", ws, id, secret);
    else
        snprintf(out, TOKEN_TEXT_MAX, "e2b_1%02zx%s%02zx%s%s", strlen(ws), ws, strlen(id), id,
                 secret);
}
