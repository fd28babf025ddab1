/* Unit tests of the volume file API's credentials (decision 0071): the
 * volume token (handlers/volume_token.c) and the signature corral-api puts
 * on a volume request for the worker (common/volume_sig.c). */
#include "check.h"
#include "secret.h"
#include "volume_relay.h"
#include "volume_sig.h"
#include "volume_token.h"

#include <stdio.h>
#include <string.h>

void unit_volume(int *total_passed, int *total_failed);

static int passed, failed;

#define SECRET "server-secret-of-at-least-32-characters"
#define WS "0a1b2c3d"
#define VOL "vol-00112233445566778899"
#define NOW 1700000000LL

static enum volume_token_verdict verdict(const char *text, long long now)
{
    struct token t;

    return volume_token_check(SECRET, text, now, &t);
}

static void test_token(void)
{
    char tok[VOLUME_TOKEN_MAX], bad[VOLUME_TOKEN_MAX + 8];
    struct token t;

    volume_token_mint(SECRET, WS, VOL, NOW + 3600, tok);
    CHECK(!strncmp(tok, "cvt1." WS "." VOL ".1700003600.", 50) && strlen(tok) == 50 + 64);
    CHECK(volume_token_check(SECRET, tok, NOW, &t) == VOLUME_TOKEN_OK && t.kind == TOKEN_VOLUME &&
          !strcmp(t.ws, WS) && !strcmp(t.id, VOL));
    /* until its expiry, not at it */
    CHECK(verdict(tok, NOW + 3599) == VOLUME_TOKEN_OK);
    CHECK(verdict(tok, NOW + 3600) == VOLUME_TOKEN_EXPIRED);
    /* another secret's, or any field changed: forged */
    CHECK(volume_token_check("another-secret-of-32-characters!!", tok, NOW, &t) ==
              VOLUME_TOKEN_FORGED &&
          t.kind == TOKEN_INVALID && !t.ws[0]);
    snprintf(bad, sizeof(bad), "%s", tok);
    memcpy(bad + 5, "0a1b2c3e", 8); /* another workspace */
    CHECK(verdict(bad, NOW) == VOLUME_TOKEN_FORGED);
    snprintf(bad, sizeof(bad), "%s", tok);
    bad[5 + 9 + 23] = '8'; /* another volume */
    CHECK(verdict(bad, NOW) == VOLUME_TOKEN_FORGED);
    snprintf(bad, sizeof(bad), "%s", tok);
    bad[5 + 9 + 25 + 3] = '9'; /* a later expiry */
    CHECK(verdict(bad, NOW) == VOLUME_TOKEN_FORGED);
    snprintf(bad, sizeof(bad), "%s", tok);
    bad[strlen(bad) - 1] = bad[strlen(bad) - 1] == 'a' ? 'b' : 'a';
    CHECK(verdict(bad, NOW) == VOLUME_TOKEN_FORGED);
    /* not a volume token: API keys, pieces, extra parts, bad fields */
    CHECK(verdict("e2b_1080a1b2c3d040a1bffee", NOW) == VOLUME_TOKEN_MALFORMED);
    CHECK(verdict("", NOW) == VOLUME_TOKEN_MALFORMED);
    CHECK(verdict(NULL, NOW) == VOLUME_TOKEN_MALFORMED);
    snprintf(bad, sizeof(bad), "%s.x", tok);
    CHECK(verdict(bad, NOW) == VOLUME_TOKEN_MALFORMED);
    snprintf(bad, sizeof(bad), "%s", tok);
    bad[3] = '2'; /* cvt2 */
    CHECK(verdict(bad, NOW) == VOLUME_TOKEN_MALFORMED);
    snprintf(bad, sizeof(bad), "%s", tok);
    bad[strlen(bad) - 1] = '\0'; /* 63 hex digits */
    CHECK(verdict(bad, NOW) == VOLUME_TOKEN_MALFORMED);
    CHECK(verdict("cvt1.0A1B." VOL ".1700003600.x", NOW) == VOLUME_TOKEN_MALFORMED);
    CHECK(verdict("cvt1." WS ".vol-1.1700003600.x", NOW) == VOLUME_TOKEN_MALFORMED);
    CHECK(verdict("cvt1." WS "." VOL ".-1." SECRET, NOW) == VOLUME_TOKEN_MALFORMED);
    CHECK(verdict("cvt1.." VOL ".1700003600.x", NOW) == VOLUME_TOKEN_MALFORMED);
}

/* The worker checks "volume:<name>:<ws>:<seconds>" under its data key. */
static void test_signature(void)
{
    char hdr[VOLUME_SIG_HEADER_MAX], msg[VOLUME_SIG_MSG_MAX], mac[SECRET_MAC_HEX];

    volume_sig_header("data-key", "corral-" VOL, WS, NOW, hdr);
    volume_sig_message("corral-" VOL, WS, "1700000000", msg, sizeof(msg));
    CHECK(!strcmp(msg, "volume:corral-" VOL ":" WS ":1700000000"));
    secret_mac_hex("data-key", msg, mac);
    CHECK(!strncmp(hdr, "1700000000:", 11) && !strcmp(hdr + 11, mac));
}

/* What a worker's error answer becomes: its own status where it is about the
 * request (a full disk among them), 502 where it is the worker's fault. */
static void test_relay_statuses(void)
{
    CHECK(volume_relay_passes(400) && volume_relay_passes(404) && volume_relay_passes(409) &&
          volume_relay_passes(411) && volume_relay_passes(413) && volume_relay_passes(503));
    CHECK(volume_relay_passes(507));
    CHECK(!volume_relay_passes(401) && !volume_relay_passes(403) && !volume_relay_passes(405) &&
          !volume_relay_passes(500) && !volume_relay_passes(502) && !volume_relay_passes(200));
}

void unit_volume(int *total_passed, int *total_failed)
{
    test_token();
    test_signature();
    test_relay_statuses();
    *total_passed += passed;
    *total_failed += failed;
}
