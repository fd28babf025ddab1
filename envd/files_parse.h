/*
 * The /files request's headers parsed (files_http.c does the I/O):
 * X-Metadata-* into an upload's metadata, Accept-Encoding into whether a
 * download is gzipped. Pure; tests/envd/unit_files.c checks each rule.
 */
#ifndef ENVD_FILES_PARSE_H
#define ENVD_FILES_PARSE_H

#include "http.h"

#include <jansson.h>
#include <stddef.h>

/* Longest metadata key (after "X-Metadata-"), as E2B's envd allows. */
#define FILES_METADATA_KEY_MAX 246

/* Metadata from X-Metadata-<key> headers: keys lowercased, first value wins.
 * NULL with msg filled when a key is empty or over FILES_METADATA_KEY_MAX,
 * or a value is not printable US-ASCII. */
json_t *files_metadata_from_headers(const struct http_req *r, char *msg, size_t msgsz);

/* True when the client asked for gzip itself: Accept-Encoding names gzip
 * alone, without q=0. */
int files_accepts_gzip(const struct http_req *r);

#endif
