/* Table tests of the /files request's headers (envd/files_parse.c):
 * X-Metadata-* into an upload's metadata (keys lowercased, first value
 * wins, key lengths and printable values enforced), and Accept-Encoding
 * into whether a download is gzipped (gzip alone, not q=0). Linked into
 * unit-envd (see unit_envd.c's main). */
#include "check.h"
#include "files_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CHECK_COUNTERS;

void test_files(int *total_passed, int *total_failed);

static struct http_req req; /* 32 KiB of head: not on the stack */

/* req with the headers names[i]: values[i], n of them. */
static void with_headers(const char *const *names, const char *const *values, int n)
{
    memset(&req, 0, sizeof(req));
    for (int i = 0; i < n; i++) {
        req.hdrs[i].name = names[i];
        req.hdrs[i].value = values[i];
    }
    req.nhdrs = n;
}

/* The metadata of one header (name: value) as compact JSON, or "!" and the
 * start of the message when refused. */
static int metadata_is(const char *name, const char *value, const char *want)
{
    char msg[300] = "", got[600];
    json_t *m;
    char *s;

    with_headers(&name, &value, 1);
    m = files_metadata_from_headers(&req, msg, sizeof(msg));
    s = m ? json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    snprintf(got, sizeof(got), "%s%s", m ? "" : "!", m ? (s ? s : "?") : msg);
    free(s);
    json_decref(m);
    if (strncmp(got, want, strlen(want)) != 0 || (m && strlen(got) != strlen(want))) {
        fprintf(stderr, "  metadata %s: %s, expected %s\n", name, got, want);
        return 0;
    }
    return 1;
}

static void test_metadata(void)
{
    static const char *const names[] = {"X-Metadata-A", "Host", "x-metadata-a", "X-METADATA-B"};
    static const char *const values[] = {"first", "h", "second", ""};
    char key[300], msg[300], *s;
    const char *kname = key, *kval = "v";
    json_t *m;

    CHECK(metadata_is("X-Metadata-Owner", "team a", "{\"owner\":\"team a\"}"));
    CHECK(metadata_is("x-metadata-MiXeD_k.1", "~!", "{\"mixed_k.1\":\"~!\"}"));
    CHECK(metadata_is("X-Metadatax", "v", "{}")); /* not the prefix */
    CHECK(metadata_is("Metadata-A", "v", "{}"));
    CHECK(metadata_is("X-Metadata-", "v", "!invalid metadata key length in header X-Metadata-"));
    CHECK(metadata_is("X-Metadata-k", "tab\there", "!metadata value of 'k' must be printable"));
    CHECK(metadata_is("X-Metadata-k", "caf\xc3\xa9", "!metadata value of 'k' must be printable"));
    CHECK(metadata_is("X-Metadata-k", "del\x7f", "!metadata value of 'k' must be printable"));
    /* the longest key, and one more */
    memcpy(key, "X-Metadata-", 11);
    memset(key + 11, 'K', FILES_METADATA_KEY_MAX);
    key[11 + FILES_METADATA_KEY_MAX] = '\0';
    with_headers(&kname, &kval, 1);
    m = files_metadata_from_headers(&req, msg, sizeof(msg));
    CHECK(m && json_object_size(m) == 1 &&
          strlen(json_object_iter_key(json_object_iter(m))) == FILES_METADATA_KEY_MAX);
    json_decref(m);
    key[11 + FILES_METADATA_KEY_MAX] = 'K';
    key[12 + FILES_METADATA_KEY_MAX] = '\0';
    CHECK(metadata_is(key, "v", "!invalid metadata key length"));
    /* keys in any case are one key, and the first value wins */
    with_headers(names, values, 4);
    m = files_metadata_from_headers(&req, msg, sizeof(msg));
    s = m ? json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    CHECK(s && strcmp(s, "{\"a\":\"first\",\"b\":\"\"}") == 0);
    free(s);
    json_decref(m);
}

struct gzip_row {
    const char *accept; /* NULL: no Accept-Encoding */
    int gzip;
};

static const struct gzip_row gzip_rows[] = {
    {"gzip", 1},
    {"GZIP", 1},
    {"  gzip", 1},
    {"gzip;q=1", 1},
    {"gzip ; q=0.5", 1},
    {"gzip;level=1", 1}, /* no q: wanted */
    {"gzip;q=0", 0},
    {"gzip;q=0.0", 0},
    {"gzip;q=abc", 0},
    {"gzip, deflate", 0}, /* fetch's default list */
    {"deflate, gzip", 0},
    {"x-gzip", 0},
    {"br", 0},
    {"", 0},
    {NULL, 0},
};

static void test_gzip(void)
{
    static const char *const name = "Accept-Encoding";

    for (size_t i = 0; i < sizeof(gzip_rows) / sizeof(gzip_rows[0]); i++) {
        int got;
        with_headers(&name, &gzip_rows[i].accept, gzip_rows[i].accept ? 1 : 0);
        got = files_accepts_gzip(&req);
        CHECK(got == gzip_rows[i].gzip);
        if (got != gzip_rows[i].gzip)
            fprintf(stderr, "  Accept-Encoding \"%s\": %d\n", gzip_rows[i].accept, got);
    }
}

void test_files(int *total_passed, int *total_failed)
{
    test_metadata();
    test_gzip();
    *total_passed += passed;
    *total_failed += failed;
}
