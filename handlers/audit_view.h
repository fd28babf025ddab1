/* audit_view.h: an audit event as JSON, the one shape GET /v1/audit and
 * `corralctl audit` print (docs/api.md). */
#ifndef CORRAL_AUDIT_VIEW_H
#define CORRAL_AUDIT_VIEW_H

#include "audit.h"

#include <jansson.h>

json_t *audit_event_view(const struct audit_entry *e);

/* {"events": [...], "next": cursor or null}: a page as both print it. */
json_t *audit_page_view(const struct audit_page *p);

#endif
