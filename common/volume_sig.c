#include "volume_sig.h"

#include "secret.h"

#include <stdio.h>
#include <string.h>

void volume_sig_message(const char *dname, const char *ws, const char *secs, char *out, size_t len)
{
    snprintf(out, len, "volume:%s:%s:%s", dname, ws, secs);
}

void volume_sig_header(const char *key, const char *dname, const char *ws, long long now,
                       char out[VOLUME_SIG_HEADER_MAX])
{
    char secs[24], msg[VOLUME_SIG_MSG_MAX], mac[SECRET_MAC_HEX];

    snprintf(secs, sizeof(secs), "%lld", now);
    volume_sig_message(dname, ws, secs, msg, sizeof(msg));
    secret_mac_hex(key, msg, mac);
    snprintf(out, VOLUME_SIG_HEADER_MAX, "%s:%s", secs, mac);
    explicit_bzero(mac, sizeof(mac));
}
