/* upload_token.c: a template upload URL's authority, derived, never stored. */
#include "upload_token.h"

#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mac_of(const char *secret, const char *ws, const char *tpl, const char *hash,
                   long long expires, const char *nonce, char mac[SECRET_MAC_HEX])
{
    char msg[256];

    snprintf(msg, sizeof(msg), "template-upload:%s:%s:%s:%lld:%s", ws, tpl, hash, expires, nonce);
    secret_mac_hex(secret, msg, mac);
}

int upload_token_mint(const char *secret, const char *ws, const char *tpl, const char *hash,
                      long long expires, char out[UPLOAD_TOKEN_MAX])
{
    char nonce[33], mac[SECRET_MAC_HEX];

    if (secret_random_hex(nonce, 16) != 0)
        return -1;
    mac_of(secret, ws, tpl, hash, expires, nonce, mac);
    snprintf(out, UPLOAD_TOKEN_MAX, "%s.%s.%lld.%s.%s", ws, tpl, expires, nonce, mac);
    return 0;
}

/* The five dot-separated fields of text, each within its buffer. */
static int split(const char *text, struct upload_grant *g, long long *expires, char *mac)
{
    char exp[24] = "";
    char *bufs[5] = {g->ws, g->tpl, exp, g->nonce, mac};
    size_t lens[5] = {sizeof(g->ws), sizeof(g->tpl), sizeof(exp), sizeof(g->nonce), SECRET_MAC_HEX};
    const char *p = text;

    for (int i = 0; i < 5; i++) {
        size_t n = strcspn(p, ".");
        if (n >= lens[i] || (i < 4 && p[n] != '.') || (i == 4 && p[n] != '\0'))
            return -1;
        memcpy(bufs[i], p, n);
        bufs[i][n] = '\0';
        p += n + (i < 4);
    }
    if (!*exp || strspn(exp, "0123456789") != strlen(exp))
        return -1;
    *expires = atoll(exp);
    return 0;
}

int upload_token_check(const char *secret, const char *text, const char *hash, long long now,
                       struct upload_grant *g, const char **why)
{
    char mac[SECRET_MAC_HEX], want[SECRET_MAC_HEX];
    long long expires;

    memset(g, 0, sizeof(*g));
    if (!text || split(text, g, &expires, mac) != 0 || !*g->tpl || !*g->nonce) {
        *why = "malformed";
        memset(g, 0, sizeof(*g));
        return -1;
    }
    mac_of(secret, g->ws, g->tpl, hash, expires, g->nonce, want);
    if (!secret_equal(mac, want)) {
        *why = "forged";
        memset(g, 0, sizeof(*g));
        return -1;
    }
    if (expires < now) {
        *why = "expired";
        memset(g, 0, sizeof(*g));
        return -1;
    }
    return 0;
}
