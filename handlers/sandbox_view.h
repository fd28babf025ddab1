/* sandbox_view.h: the native JSON representation of a sandbox record. The
 * isolation tier is always in it; env vars never are (they may hold secrets). */
#ifndef CORRAL_SANDBOX_VIEW_H
#define CORRAL_SANDBOX_VIEW_H

#include "sandbox_store.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

json_t *sandbox_view(const struct sandbox_record *record);

/* A policy field of the record (egress, egress_next) as JSON; null when NULL,
 * empty or "null" (no policy). */
json_t *sandbox_egress_json(const char *policy);

/* Milliseconds since the epoch as RFC 3339 UTC text. */
void format_time_ms(int64_t ms, char *out, size_t outlen);
/* The same as a JSON string. */
json_t *format_time_json(int64_t ms);

#endif
