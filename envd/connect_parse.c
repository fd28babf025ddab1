/*
 * Call headers are read with decimal_parse, not atoll: "5abc" is not a
 * timeout of 5 ms, and a number too large for a deadline is no deadline
 * (as a malformed one always was) rather than an overflow.
 */
#include "connect_parse.h"
#include "decimal_parse.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

json_t *rpc_parse_message(struct rpc_error *err, const char *body, size_t len, int enveloped)
{
    json_error_t jerr;
    json_t *in;

    if (enveloped) {
        uint32_t be, n;
        if (len < 5) {
            rpc_fail(err, "invalid_argument", "stream request has no envelope");
            return NULL;
        }
        if (body[0] & 1) {
            rpc_fail(err, "unimplemented", "compressed messages are not supported");
            return NULL;
        }
        memcpy(&be, body + 1, 4);
        n = ntohl(be);
        if (n != len - 5) {
            rpc_fail(err, "invalid_argument", "envelope length mismatch");
            return NULL;
        }
        body += 5;
        len = n;
    }
    if (len == 0)
        return json_object();
    in = json_loadb(body, len, 0, &jerr);
    if (!json_is_object(in)) {
        json_decref(in);
        rpc_fail(err, "invalid_argument", "request is not a JSON object: %s", jerr.text);
        return NULL;
    }
    return in;
}

void rpc_call_headers_parse(const char *timeout, const char *keepalive, long long now_ms,
                            long long *deadline_ms, int *keepalive_ms)
{
    long long v;

    *deadline_ms = 0;
    if (timeout != NULL && decimal_parse(timeout, &v) == 0 && v > 0 &&
        v <= LLONG_MAX - (now_ms > 0 ? now_ms : 0))
        *deadline_ms = now_ms + v;
    *keepalive_ms = RPC_KEEPALIVE_DEFAULT_S * 1000;
    if (keepalive != NULL && decimal_parse(keepalive, &v) == 0 && v > 0 && v <= RPC_KEEPALIVE_MAX_S)
        *keepalive_ms = (int)(v * 1000);
}

int rpc_content_type_is(const char *ct, const char *want)
{
    size_t n = strlen(want);

    return ct != NULL && strncasecmp(ct, want, n) == 0 && (ct[n] == '\0' || ct[n] == ';');
}
