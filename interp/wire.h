/* wire.h: Jupyter messages as they cross ZeroMQ (the messaging protocol,
 * version 5.3; decision 0088). A message is a multipart: the routing
 * identities, the delimiter "<IDS|MSG>", the HMAC-SHA256 signature (hex) of
 * the next four frames under the connection file's key, then the header,
 * the parent header, the metadata and the content, each a JSON object, and
 * any binary buffers. Pure: jansson and OpenSSL's HMAC, no sockets. */
#ifndef CORRAL_INTERP_WIRE_H
#define CORRAL_INTERP_WIRE_H

#include <jansson.h>
#include <stddef.h>

#define WIRE_DELIM "<IDS|MSG>"
#define WIRE_SIG_HEX 64
#define WIRE_MAX_IDS 8
#define WIRE_VERSION "5.3"

struct wire_frame {
    const unsigned char *data;
    size_t len;
};

/* A decoded message. The JSON parts are owned (wire_msg_clear); the
 * identities point into the frames it was decoded from. */
struct wire_msg {
    struct wire_frame ids[WIRE_MAX_IDS];
    size_t nids;
    json_t *header, *parent, *metadata, *content;
};

/* An encoded message's frames, each allocated (wire_out_free). */
struct wire_out {
    struct {
        unsigned char *data;
        size_t len;
    } frames[WIRE_MAX_IDS + 6];
    size_t n;
};

/* The hex signature of the four JSON frames under key (keylen 0: unsigned,
 * out ""). 0, or -1 when HMAC fails. */
int wire_sign(const unsigned char *key, size_t keylen, const struct wire_frame parts[4],
              char out[WIRE_SIG_HEX + 1]);

/* A header: msg_id, session, username "corral", date (ISO 8601, as given),
 * msg_type, version. NULL when out of memory. */
json_t *wire_header(const char *msg_type, const char *msg_id, const char *session,
                    const char *date);

/* msg's frames, signed with key: its identities, the delimiter, the
 * signature, the four parts (a NULL part is {}). 0, or -1 (out of memory,
 * too many identities). */
int wire_encode(const struct wire_msg *msg, const unsigned char *key, size_t keylen,
                struct wire_out *out);
void wire_out_free(struct wire_out *out);

/* frames[0..n) as a message: the identities before the delimiter, the
 * signature checked in constant time (a wrong one, or none with a key, is
 * refused), four JSON objects. 0, or -1 with why in err; msg is empty then. */
int wire_decode(const struct wire_frame *frames, size_t n, const unsigned char *key, size_t keylen,
                struct wire_msg *msg, char *err, size_t errlen);
void wire_msg_clear(struct wire_msg *msg);

/* The message's msg_type (from its header), or "". */
const char *wire_type(const struct wire_msg *msg);

#endif
