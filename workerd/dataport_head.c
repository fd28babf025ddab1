/* dataport_head.c: the data port's request head, signature and refusals as
 * pure functions (see dataport_head.h; the I/O is in dataport.c). */
#include "dataport_head.h"

#include "dataport_frame.h"
#include "http_status.h"
#include "secret.h"
#include "token.h"
#include "volume_names.h"
#include "volume_sig.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int name_is(const char *line, size_t namelen, const char *name)
{
    return namelen == strlen(name) && strncasecmp(line, name, namelen) == 0;
}

/* 1 when the comma-separated list value (of length n) holds token. */
static int has_token(const char *v, size_t n, const char *token)
{
    size_t tl = strlen(token), i = 0;

    while (i < n) {
        size_t s, e;
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        s = i;
        while (i < n && v[i] != ',')
            i++;
        e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e - s == tl && strncasecmp(v + s, token, tl) == 0)
            return 1;
    }
    return 0;
}

static void copy_value(char *dst, size_t cap, const char *v, size_t n, int *count)
{
    (*count)++;
    if (n >= cap)
        n = cap - 1; /* too long: fails validation, never matches */
    memcpy(dst, v, n);
    dst[n] = '\0';
}

/* Content-Length's value: digits only, at most 18 of them; -1 otherwise. */
static long long length_value(const char *v, size_t n)
{
    long long x = 0;

    if (n == 0 || n > 18)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        x = x * 10 + (v[i] - '0');
    }
    return x;
}

/* The framing headers and Connection's "close" of one header line. */
static void note_framing(struct dataport_head *h, const char *p, size_t nl, const char *v,
                         size_t vl)
{
    if (name_is(p, nl, "Content-Length")) {
        h->n_cl++;
        h->cl = length_value(v, vl);
    } else if (name_is(p, nl, "Transfer-Encoding")) {
        h->n_te++;
        h->te_chunked = vl == 7 && strncasecmp(v, "chunked", 7) == 0;
    } else if (name_is(p, nl, "Connection")) {
        h->close |= has_token(v, vl, "close");
    }
}

int dataport_head_parse(struct dataport_head *h)
{
    const char *p = h->buf, *end, *eol;
    int has_upgrade = 0, conn_upgrade = 0;

    if (h->len < 4 || memcmp(h->buf + h->len - 4, "\r\n\r\n", 4) != 0)
        return -1;
    end = h->buf + h->len - 2; /* before the blank line */
    eol = memmem(p, (size_t)(end - p), "\r\n", 2);
    if (!eol || eol == p)
        return -1;
    h->head_method = h->len > 5 && memcmp(h->buf, "HEAD ", 5) == 0;
    for (p = eol + 2; p < end; p = eol + 2) {
        const char *colon, *v, *ve;

        eol = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
        if (!eol)
            return -1;
        colon = memchr(p, ':', (size_t)(eol - p));
        if (!colon || colon == p || p[0] == ' ' || p[0] == '\t')
            return -1;
        v = colon + 1;
        while (v < eol && (*v == ' ' || *v == '\t'))
            v++;
        ve = eol;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        size_t nl = (size_t)(colon - p), vl = (size_t)(ve - v);
        if (name_is(p, nl, "X-Corral-Sandbox"))
            copy_value(h->sandbox, sizeof(h->sandbox), v, vl, &h->n_sandbox);
        else if (name_is(p, nl, "X-Corral-Port"))
            copy_value(h->port, sizeof(h->port), v, vl, &h->n_port);
        else if (name_is(p, nl, "X-Corral-Gateway"))
            copy_value(h->gateway, sizeof(h->gateway), v, vl, &h->n_gateway);
        else if (name_is(p, nl, "X-Corral-Volume"))
            copy_value(h->volume, sizeof(h->volume), v, vl, &h->n_volume);
        else if (name_is(p, nl, "X-Corral-Workspace"))
            copy_value(h->workspace, sizeof(h->workspace), v, vl, &h->n_workspace);
        else if (name_is(p, nl, "Upgrade"))
            has_upgrade = vl > 0;
        else if (name_is(p, nl, "Connection"))
            conn_upgrade |= has_token(v, vl, "upgrade");
        note_framing(h, p, nl, v, vl);
    }
    h->upgrade = has_upgrade && conn_upgrade;
    return 0;
}

int dataport_all_digits(const char *s, size_t min, size_t max)
{
    size_t n = strlen(s);

    if (n < min || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

int dataport_valid_id(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > DATAPORT_ID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

static int signed_by(const char *key, const char *msg, const char *sig)
{
    char mac[SECRET_MAC_HEX];
    int ok;

    if (!key || !*key)
        return 0;
    secret_mac_hex(key, msg, mac);
    ok = secret_equal(mac, sig);
    explicit_bzero(mac, sizeof(mac));
    return ok;
}

/* A request names what its signature covers: a sandbox and port, or a volume
 * and workspace (common/volume_sig.h), each exactly once. 0, or -1 with why. */
static int target_ok(const struct dataport_head *h, const char **why)
{
    if (h->n_volume || h->n_workspace) {
        if (h->n_volume != 1 || h->n_workspace != 1 || h->n_gateway != 1 || h->n_sandbox ||
            h->n_port) {
            *why = "a volume request names one X-Corral-Volume, X-Corral-Workspace and "
                   "X-Corral-Gateway, and no sandbox";
            return -1;
        }
        if (!volume_docker_name_ok(h->volume) || !token_is_id(h->workspace)) {
            *why = "malformed X-Corral-Volume or X-Corral-Workspace";
            return -1;
        }
        return 0;
    }
    if (h->n_sandbox != 1 || h->n_port != 1 || h->n_gateway != 1) {
        *why = "missing or repeated X-Corral-Sandbox, X-Corral-Port or X-Corral-Gateway";
        return -1;
    }
    if (!dataport_valid_id(h->sandbox) || !dataport_all_digits(h->port, 1, 5) ||
        h->port[0] == '0' || atoi(h->port) > 65535) {
        *why = "malformed X-Corral-Sandbox or X-Corral-Port";
        return -1;
    }
    return 0;
}

int dataport_signature_check(const struct dataport_head *h, const char *key, const char *previous,
                             long long now, const char **why)
{
    char msg[VOLUME_SIG_MSG_MAX], secs[24];
    const char *colon = strchr(h->gateway, ':');
    long long t;
    size_t sl;

    if (target_ok(h, why) != 0)
        return -1;
    sl = colon ? (size_t)(colon - h->gateway) : 0;
    if (sl == 0 || sl >= sizeof(secs) || strlen(colon + 1) != SECRET_MAC_HEX - 1) {
        *why = "malformed X-Corral-Gateway";
        return -1;
    }
    memcpy(secs, h->gateway, sl);
    secs[sl] = '\0';
    if (!dataport_all_digits(secs, 1, 12)) {
        *why = "malformed X-Corral-Gateway";
        return -1;
    }
    t = atoll(secs);
    if (t < now - DATAPORT_MAX_AGE || t > now + DATAPORT_MAX_AGE) {
        *why = "gateway signature expired";
        return -1;
    }
    if (!key || !*key) {
        *why = "worker starting (not enrolled yet); retry shortly";
        return -2; /* not the client's fault: 503, to be retried */
    }
    if (h->n_volume)
        volume_sig_message(h->volume, h->workspace, secs, msg, sizeof(msg));
    else
        snprintf(msg, sizeof(msg), "%s:%s:%s", h->sandbox, h->port, secs);
    if (!signed_by(key, msg, colon + 1) && !signed_by(previous, msg, colon + 1)) {
        *why = "invalid gateway signature";
        return -1;
    }
    return 0;
}

int dataport_head_body(const struct dataport_head *h, struct dataport_body *b, const char **why)
{
    if (h->n_te > 0) {
        if (h->n_te > 1 || !h->te_chunked || h->n_cl > 0) {
            *why = "Transfer-Encoding other than one \"chunked\", or with Content-Length";
            return -1;
        }
        dataport_body_init(b, DP_BODY_CHUNKED, 0);
        return 0;
    }
    if (h->n_cl > 1 || (h->n_cl == 1 && h->cl < 0)) {
        *why = "malformed or repeated Content-Length";
        return -1;
    }
    dataport_body_init(b, h->n_cl ? DP_BODY_LENGTH : DP_BODY_NONE,
                       h->n_cl ? (unsigned long long)h->cl : 0);
    return 0;
}

size_t dataport_head_forward(const struct dataport_head *h, char *out)
{
    const char *p = h->buf, *end = h->buf + h->len;
    char *o = out;

    while (p < end) {
        const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
        size_t n = (size_t)(eol - p) + 2;

        if (eol == p) {           /* the blank line */
            memcpy(o, "\r\n", 3); /* with its NUL */
            o += 2;
            break;
        }
        if (p != h->buf && (strncasecmp(p, "X-Corral-", 9) == 0 ||
                            (!h->upgrade && strncasecmp(p, "Connection:", 11) == 0) ||
                            (!h->upgrade && strncasecmp(p, "Keep-Alive:", 11) == 0))) {
            p += n;
            continue;
        }
        memcpy(o, p, n);
        o += n;
        p += n;
    }
    return (size_t)(o - out);
}

/* The answer for JSON j (taken): status line, headers, body. */
static char *json_response(int code, json_t *j, size_t *len)
{
    char *body = j ? json_dumps(j, JSON_COMPACT) : NULL, *out = NULL;
    int n;

    json_decref(j);
    if (!body)
        return NULL;
    n = asprintf(&out,
                 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n%s"
                 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                 code, http_status_text(code), code == 503 ? "Retry-After: 1\r\n" : "",
                 strlen(body), body);
    free(body);
    if (n < 0)
        return NULL;
    *len = (size_t)n;
    return out;
}

char *dataport_error_response(int code, const char *message, size_t *len)
{
    json_t *j = json_pack("{s:i,s:s}", "code", code, "message", message);

    if (!j) /* message is not UTF-8: the status's reason phrase instead */
        j = json_pack("{s:i,s:s}", "code", code, "message", http_status_text(code));
    return json_response(code, j, len);
}

char *dataport_not_found_response(const char *sbid, size_t *len)
{
    return json_response(502,
                         json_pack("{s:s,s:s,s:i}", "sandboxId", sbid, "message",
                                   "The sandbox was not found", "code", 502),
                         len);
}
