/* metrics_ids_parse.h: the sandbox_ids query parameter of E2B's GET
 * /sandboxes/metrics (pure: h_metrics.c reads and answers). */
#ifndef CORRAL_METRICS_IDS_PARSE_H
#define CORRAL_METRICS_IDS_PARSE_H

#include "scheduler.h"

#include <stddef.h>

#define METRICS_IDS_MAX 100 /* the spec's maxItems of sandbox_ids */

/* text (decoded, cut in place): comma-separated, 1 to METRICS_IDS_MAX
 * distinct sandbox ids, empty items skipped. The count of ids, or -1 with
 * err. */
int metrics_ids_parse(char *text, char ids[METRICS_IDS_MAX][SANDBOX_ID_MAX], char *err,
                      size_t errlen);

#endif
