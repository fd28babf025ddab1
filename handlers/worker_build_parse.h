/* worker_build_parse.h: a worker's report on a build it runs, POST
 * /v1/worker/builds/{bid} (docs/templates.md). Pure. */
#ifndef CORRAL_WORKER_BUILD_PARSE_H
#define CORRAL_WORKER_BUILD_PARSE_H

#include <jansson.h>
#include <stddef.h>

#define WORKER_BUILD_LOGS_MAX 1000
#define WORKER_BUILD_SIZE_MAX (1LL << 50)

struct worker_build_report {
    json_t *logs; /* [{timestamp, level, message, step?}], a new reference */
    int ends;     /* 0: progress only; 1 ready; 2 error */
    char step[16], reason[512], digest[72];
    long long size_bytes; /* what a ready build added over its base (0: not said) */
};

/* 0, or -1 with err naming the field. */
int worker_build_parse(json_t *body, struct worker_build_report *out, char *err, size_t errlen);

/* The image a pushed build is pulled by: target "host/repo:tag" with its
 * digest, "host/repo@sha256:…". 0, or -1 when target has no tag. */
int worker_build_image(const char *target, const char *digest, char *out, size_t len);

#endif
