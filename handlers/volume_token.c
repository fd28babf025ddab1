#include "volume_token.h"

#include "secret.h"
#include "volume_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "cvt1"

static void mac_of(const char *secret, const char *ws, const char *id, const char *expires,
                   char out[SECRET_MAC_HEX])
{
    char msg[256];

    snprintf(msg, sizeof(msg), "volume-token:%s:%s:%s", ws, id, expires);
    secret_mac_hex(secret, msg, out);
}

void volume_token_mint(const char *secret, const char *ws, const char *id, long long expires,
                       char out[VOLUME_TOKEN_MAX])
{
    char exp[24], mac[SECRET_MAC_HEX];

    snprintf(exp, sizeof(exp), "%lld", expires);
    mac_of(secret, ws, id, exp, mac);
    snprintf(out, VOLUME_TOKEN_MAX, PREFIX ".%s.%s.%s.%s", ws, id, exp, mac);
    explicit_bzero(mac, sizeof(mac));
}

/* Splits text at dots into exactly n parts (copies, each below cap). */
static int split(const char *text, char parts[][72], int n)
{
    int i = 0;

    for (const char *p = text;; i++) {
        size_t len = strcspn(p, ".");
        if (i >= n || len >= 72)
            return -1;
        memcpy(parts[i], p, len);
        parts[i][len] = '\0';
        if (p[len] == '\0')
            return i + 1 == n ? 0 : -1;
        p += len + 1;
    }
}

enum volume_token_verdict volume_token_check(const char *secret, const char *text, long long now,
                                             struct token *out)
{
    char parts[5][72], mac[SECRET_MAC_HEX];
    int ok;

    memset(out, 0, sizeof(*out));
    if (!text || strlen(text) >= VOLUME_TOKEN_MAX || split(text, parts, 5) != 0 ||
        strcmp(parts[0], PREFIX) != 0 || !token_is_id(parts[1]) || !volume_id_ok(parts[2]) ||
        strlen(parts[3]) == 0 || strlen(parts[3]) > 12 ||
        strspn(parts[3], "0123456789") != strlen(parts[3]) || strlen(parts[4]) != 64)
        return VOLUME_TOKEN_MALFORMED;
    mac_of(secret, parts[1], parts[2], parts[3], mac);
    ok = secret_equal(mac, parts[4]);
    explicit_bzero(mac, sizeof(mac));
    if (!ok)
        return VOLUME_TOKEN_FORGED;
    if (atoll(parts[3]) <= now)
        return VOLUME_TOKEN_EXPIRED;
    out->kind = TOKEN_VOLUME;
    snprintf(out->ws, sizeof(out->ws), "%.32s", parts[1]); /* both checked: at most 32 */
    snprintf(out->id, sizeof(out->id), "%.32s", parts[2]);
    return VOLUME_TOKEN_OK;
}
