#include "wire.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wire_sign(const unsigned char *key, size_t keylen, const struct wire_frame parts[4],
              char out[WIRE_SIG_HEX + 1])
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    size_t maclen = 0;
    EVP_MAC *hmac;
    EVP_MAC_CTX *ctx = NULL;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
                           OSSL_PARAM_construct_end()};
    int ok;

    out[0] = '\0';
    if (keylen == 0)
        return 0;
    hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    ok = hmac && (ctx = EVP_MAC_CTX_new(hmac)) && EVP_MAC_init(ctx, key, keylen, params) == 1;
    for (int i = 0; ok && i < 4; i++)
        ok = EVP_MAC_update(ctx, parts[i].data, parts[i].len) == 1;
    ok = ok && EVP_MAC_final(ctx, mac, &maclen, sizeof(mac)) == 1 && maclen == WIRE_SIG_HEX / 2;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(hmac);
    if (!ok)
        return -1;
    for (size_t i = 0; i < maclen; i++)
        snprintf(out + 2 * i, 3, "%02x", mac[i]);
    return 0;
}

json_t *wire_header(const char *msg_type, const char *msg_id, const char *session, const char *date)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "msg_id", msg_id, "session", session,
                     "username", "corral", "date", date, "msg_type", msg_type, "version",
                     WIRE_VERSION);
}

/* A copy of len bytes as a frame of out. */
static int push(struct wire_out *out, const void *data, size_t len)
{
    unsigned char *copy = malloc(len ? len : 1);

    if (!copy)
        return -1;
    memcpy(copy, data, len);
    out->frames[out->n].data = copy;
    out->frames[out->n++].len = len;
    return 0;
}

/* part as compact JSON text, {} when NULL; the caller frees. */
static char *dump(const json_t *part)
{
    return part ? json_dumps(part, JSON_COMPACT) : strdup("{}");
}

int wire_encode(const struct wire_msg *msg, const unsigned char *key, size_t keylen,
                struct wire_out *out)
{
    const json_t *in[4] = {msg->header, msg->parent, msg->metadata, msg->content};
    char *text[4] = {0}, sig[WIRE_SIG_HEX + 1];
    struct wire_frame parts[4];
    int rc = -1;

    out->n = 0;
    if (msg->nids > WIRE_MAX_IDS)
        return -1;
    for (int i = 0; i < 4; i++) {
        text[i] = dump(in[i]);
        if (!text[i])
            goto done;
        parts[i] = (struct wire_frame){(const unsigned char *)text[i], strlen(text[i])};
    }
    if (wire_sign(key, keylen, parts, sig) != 0)
        goto done;
    for (size_t i = 0; i < msg->nids; i++)
        if (push(out, msg->ids[i].data, msg->ids[i].len) != 0)
            goto done;
    if (push(out, WIRE_DELIM, strlen(WIRE_DELIM)) != 0 || push(out, sig, strlen(sig)) != 0)
        goto done;
    for (int i = 0; i < 4; i++)
        if (push(out, parts[i].data, parts[i].len) != 0)
            goto done;
    rc = 0;
done:
    for (int i = 0; i < 4; i++)
        free(text[i]);
    if (rc != 0)
        wire_out_free(out);
    return rc;
}

void wire_out_free(struct wire_out *out)
{
    for (size_t i = 0; i < out->n; i++)
        free(out->frames[i].data);
    out->n = 0;
}

void wire_msg_clear(struct wire_msg *msg)
{
    json_decref(msg->header);
    json_decref(msg->parent);
    json_decref(msg->metadata);
    json_decref(msg->content);
    memset(msg, 0, sizeof(*msg));
}

/* frame as a JSON object, or NULL. */
static json_t *object(const struct wire_frame *f)
{
    json_t *v = json_loadb((const char *)f->data, f->len, JSON_REJECT_DUPLICATES, NULL);

    if (v && !json_is_object(v)) {
        json_decref(v);
        v = NULL;
    }
    return v;
}

static int refuse(struct wire_msg *msg, char *err, size_t errlen, const char *why)
{
    wire_msg_clear(msg);
    snprintf(err, errlen, "%s", why);
    return -1;
}

/* The signature frame against the four parts: in constant time. */
static int signature_ok(const struct wire_frame *sig, const struct wire_frame parts[4],
                        const unsigned char *key, size_t keylen)
{
    char want[WIRE_SIG_HEX + 1];

    if (wire_sign(key, keylen, parts, want) != 0)
        return 0;
    if (keylen == 0)
        return 1;
    return sig->len == WIRE_SIG_HEX && CRYPTO_memcmp(sig->data, want, WIRE_SIG_HEX) == 0;
}

int wire_decode(const struct wire_frame *frames, size_t n, const unsigned char *key, size_t keylen,
                struct wire_msg *msg, char *err, size_t errlen)
{
    size_t d = 0;
    json_t **slot[4] = {&msg->header, &msg->parent, &msg->metadata, &msg->content};

    memset(msg, 0, sizeof(*msg));
    while (d < n && !(frames[d].len == strlen(WIRE_DELIM) &&
                      memcmp(frames[d].data, WIRE_DELIM, frames[d].len) == 0))
        d++;
    if (d == n)
        return refuse(msg, err, errlen, "no <IDS|MSG> delimiter");
    if (d > WIRE_MAX_IDS)
        return refuse(msg, err, errlen, "too many identities");
    if (n - d < 6)
        return refuse(msg, err, errlen, "fewer than four parts after the signature");
    if (!signature_ok(&frames[d + 1], &frames[d + 2], key, keylen))
        return refuse(msg, err, errlen, "bad signature");
    for (size_t i = 0; i < d; i++)
        msg->ids[i] = frames[i];
    msg->nids = d;
    for (int i = 0; i < 4; i++)
        if (!(*slot[i] = object(&frames[d + 2 + (size_t)i])))
            return refuse(msg, err, errlen, "a part is not a JSON object");
    return 0;
}

const char *wire_type(const struct wire_msg *msg)
{
    const char *t = json_string_value(json_object_get(msg->header, "msg_type"));

    return t ? t : "";
}
