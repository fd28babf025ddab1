/* volume_token.h: the token of a volume's file API (decision 0071): E2B's
 * VolumeAndToken.token, which POST /volumes and GET /volumes/{id} answer and
 * the SDK sends as "Authorization: Bearer" to /volumecontent/{volumeID}/...
 * It is derived, never stored:
 *
 *     cvt1.<workspace>.<volume id>.<expires, unix s>.<hex HMAC-SHA-256 under the
 *     server secret of "volume-token:<workspace>:<volume id>:<expires>">
 *
 * so it opens one volume of one workspace, for an hour (E2B's is short-lived
 * too; Volume.connect gets a new one), and nothing after the volume is
 * deleted: the handler reads the volume's record on every request. The
 * server secret is corral-api's alone: no worker, nginx or client can make
 * one. Pure: tests/unit/unit_volume.c. */
#ifndef CORRAL_VOLUME_TOKEN_H
#define CORRAL_VOLUME_TOKEN_H

#include "token.h"

#define VOLUME_TOKEN_TTL_S 3600
#define VOLUME_TOKEN_MAX 192

enum volume_token_verdict {
    VOLUME_TOKEN_OK,
    VOLUME_TOKEN_MALFORMED, /* not a volume token at all (an API key, garbage) */
    VOLUME_TOKEN_FORGED,    /* the shape, not our MAC */
    VOLUME_TOKEN_EXPIRED,
};

/* The token for volume id of workspace ws, valid until expires (unix s). */
void volume_token_mint(const char *secret, const char *ws, const char *id, long long expires,
                       char out[VOLUME_TOKEN_MAX]);

/* Checks text at unix time now. VOLUME_TOKEN_OK fills out (kind TOKEN_VOLUME,
 * ws, the volume id in id); any other verdict leaves out zeroed. */
enum volume_token_verdict volume_token_check(const char *secret, const char *text, long long now,
                                             struct token *out);

#endif
