/* volume_sig.h: the signature on a request for a volume's files, which
 * corral-api sends to the data port of the worker holding the volume and
 * that data port checks (decision 0071). It is the gateway's
 * X-Corral-Gateway ("<unix seconds>:<hex HMAC-SHA-256>", under the worker's
 * data key, at most 60 s old: docs/data-plane.md) over another message:
 *
 *     volume:<Docker volume name>:<workspace>:<seconds>
 *
 * A sandbox request's message is "<sandbox>:<port>:<seconds>", two colons
 * and an id without one, so neither kind of signature stands for the other. */
#ifndef CORRAL_VOLUME_SIG_H
#define CORRAL_VOLUME_SIG_H

#include <stddef.h>

#define VOLUME_SIG_MSG_MAX 160   /* the message, for names of valid shapes */
#define VOLUME_SIG_HEADER_MAX 96 /* "<seconds>:<64 hex>" and its NUL */

/* The message for Docker volume dname of workspace ws, signed at secs
 * (decimal unix seconds). */
void volume_sig_message(const char *dname, const char *ws, const char *secs, char *out, size_t len);

/* X-Corral-Gateway's value for a request made at unix time now. */
void volume_sig_header(const char *key, const char *dname, const char *ws, long long now,
                       char out[VOLUME_SIG_HEADER_MAX]);

#endif
