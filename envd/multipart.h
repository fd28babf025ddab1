/* A streaming multipart/form-data reader: parts are read piece by piece, never held whole. */
#ifndef ENVD_MULTIPART_H
#define ENVD_MULTIPART_H

#include <stddef.h>
#include <sys/types.h>

/* Where the multipart bytes come from (the request body, maybe gunzipped). */
typedef ssize_t (*mp_source_fn)(void *ctx, void *buf, size_t n);

#define MP_BUF_SIZE (128 * 1024)

struct multipart {
    mp_source_fn read;
    void *ctx;
    char delim[80]; /* "\r\n--" + boundary */
    size_t dlen;
    size_t len, off;
    int src_eof;
    int done;
    char buf[MP_BUF_SIZE];
};

/* boundary from the Content-Type header. -1 when it has none. */
int multipart_init(struct multipart *mp, const char *content_type, mp_source_fn read, void *ctx);

/* Moves to the next part and reads its headers. 1: a part; 0: no more; -1: malformed. */
int multipart_next(struct multipart *mp, char *name, size_t namesz, char *filename,
                   size_t filenamesz);

/* Reads the current part's content: bytes read, 0 at its end, -1 when malformed. */
ssize_t multipart_read(struct multipart *mp, void *out, size_t n);

#endif
