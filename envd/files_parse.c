/*
 * Header values come from the client as they are: metadata must be
 * printable US-ASCII because it is stored in xattrs and answered in JSON,
 * and gzip is chosen only when asked for alone (see files_accepts_gzip).
 */
#include "files_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Keys are lowercased so that X-Metadata-A and x-metadata-a are one key. */
json_t *files_metadata_from_headers(const struct http_req *r, char *msg, size_t msgsz)
{
    json_t *meta = json_object();
    char key[256];

    for (int i = 0; i < r->nhdrs; i++) {
        const char *name = r->hdrs[i].name;
        if (strncasecmp(name, "X-Metadata-", 11) != 0)
            continue;
        size_t klen = strlen(name + 11);
        if (klen == 0 || klen > FILES_METADATA_KEY_MAX) {
            snprintf(msg, msgsz, "invalid metadata key length in header %s", name);
            json_decref(meta);
            return NULL;
        }
        for (size_t k = 0; k <= klen; k++)
            key[k] = (char)tolower((unsigned char)name[11 + k]);
        for (const char *v = r->hdrs[i].value; *v != '\0'; v++) {
            if (*v < 0x20 || *v > 0x7e) {
                snprintf(msg, msgsz, "metadata value of '%s' must be printable US-ASCII", key);
                json_decref(meta);
                return NULL;
            }
        }
        if (json_object_get(meta, key) == NULL)
            json_object_set_new(meta, key, json_string(r->hdrs[i].value));
    }
    return meta;
}

/* gzip alone is what the SDK sends with {gzip: true}. A generic list such as
 * fetch's default "gzip, deflate" gets the file as it is: compressing on the
 * fly costs far more throughput than it saves on loopback or a fast network. */
int files_accepts_gzip(const struct http_req *r)
{
    const char *ae = http_header(r, "Accept-Encoding");
    const char *g = ae ? strcasestr(ae, "gzip") : NULL;
    const char *q;

    while (ae != NULL && *ae == ' ')
        ae++;
    if (g == NULL || g != ae || strchr(ae, ','))
        return 0;
    q = g + 4;
    while (*q == ' ')
        q++;
    if (*q != ';')
        return 1;
    q = strstr(q, "q=");
    return q == NULL || atof(q + 2) > 0;
}
