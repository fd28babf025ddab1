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

void token_parse(const char *text, struct token *out)
{
    const char *p, *u1, *u2;
    enum token_kind kind;

    memset(out, 0, sizeof(*out));
    if (strncmp(text, "ck_", 3) == 0)
        kind = TOKEN_API_KEY;
    else if (strncmp(text, "jn_", 3) == 0)
        kind = TOKEN_JOIN;
    else
        return;
    p = text + 3;
    u1 = strchr(p, '_');
    u2 = u1 ? strchr(u1 + 1, '_') : NULL;
    if (!u2)
        return;
    /* Only join tokens may name the unscoped fleet (an empty workspace). */
    if (take(p, u1, out->ws, TOKEN_WS_MAX, kind == TOKEN_JOIN) ||
        take(u1 + 1, u2, out->id, TOKEN_ID_MAX, 0) ||
        take(u2 + 1, u2 + 1 + strlen(u2 + 1), out->secret, TOKEN_SECRET_MAX, 0))
        return;
    out->kind = kind;
}

void token_format(enum token_kind kind, const char *ws, const char *id, const char *secret,
                  char *out)
{
    snprintf(out, TOKEN_TEXT_MAX, "%s_%s_%s_%s", kind == TOKEN_JOIN ? "jn" : "ck", ws, id, secret);
}
