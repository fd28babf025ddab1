/* telemetry_parse.h: the body of POST /v1/worker/telemetry checked and
 * rebuilt (pure: no Redis, no FastCGI), every sandbox's sample and log lines
 * in the shape scheduler/telemetry.h stores (telemetry_view.h rebuilds each).
 * The whole body is checked before h_telemetry.c writes any of it. */
#ifndef CORRAL_TELEMETRY_PARSE_H
#define CORRAL_TELEMETRY_PARSE_H

#include <jansson.h>
#include <stddef.h>

#define TELEMETRY_PUSH_MAX_SANDBOXES 1000
#define TELEMETRY_PUSH_MAX_LINES 200 /* per sandbox and push */

/* One sandbox's part of the body, in the shape it is stored. */
struct telemetry_item {
    const char *sbid; /* borrowed from the body */
    char *metric;     /* NULL when the body has none */
    long long metric_ms;
    size_t n;
    char **logs;   /* n lines, stored shape */
    long long *ms; /* their times */
};

struct telemetry_body {
    struct telemetry_item *items;
    size_t n;
};

/* {"sandboxes": [{id, metric?, logs?}, ...]} into out, times checked against
 * now_ms. 0, or the status to answer (400, 500) with err; out is then
 * empty. */
int telemetry_body_parse(const json_t *body, long long now_ms, struct telemetry_body *out,
                         char *err, size_t errlen);
void telemetry_body_free(struct telemetry_body *b);

#endif
