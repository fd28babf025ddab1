/* upload_token.h: the upload URL E2B's GET /templates/{id}/files/{hash}
 * answers. The SDK PUTs a COPY step's tar there, without its API key, so the
 * URL carries its own authority (docs/templates.md):
 *
 *     /templatefiles/<hash>?t=<workspace>.<template id>.<expires>.<nonce>.<mac>
 *
 * mac: hex HMAC-SHA-256 under the server secret of
 * "template-upload:<workspace>:<template>:<hash>:<expires>:<nonce>". It opens
 * one hash of one template of one workspace, for 15 minutes, once (the nonce
 * is claimed in Redis by the upload). Pure: tests/unit/unit_template_build.c. */
#ifndef CORRAL_UPLOAD_TOKEN_H
#define CORRAL_UPLOAD_TOKEN_H

#define UPLOAD_TOKEN_TTL_S 900
#define UPLOAD_TOKEN_MAX 200

struct upload_grant {
    char ws[33], tpl[33], nonce[33];
};

/* 0, or -1 (no randomness). */
int upload_token_mint(const char *secret, const char *ws, const char *tpl, const char *hash,
                      long long expires, char out[UPLOAD_TOKEN_MAX]);

/* 0 with g filled when text opens hash at unix time now; -1 otherwise (why:
 * "malformed", "forged", "expired"). */
int upload_token_check(const char *secret, const char *text, const char *hash, long long now,
                       struct upload_grant *g, const char **why);

#endif
