/* The sandbox_ids of GET /sandboxes/metrics (metrics_ids_parse.h). */
#include "metrics_ids_parse.h"
#include "token.h"

#include <stdio.h>
#include <string.h>

int metrics_ids_parse(char *text, char ids[METRICS_IDS_MAX][SANDBOX_ID_MAX], char *err,
                      size_t errlen)
{
    char *save = NULL, *id;
    int n = 0;

    for (id = strtok_r(text, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
        if (n == METRICS_IDS_MAX) {
            snprintf(err, errlen, "sandbox_ids: at most %d ids", METRICS_IDS_MAX);
            return -1;
        }
        if (!token_is_id(id)) {
            snprintf(err, errlen, "sandbox_ids: '%.40s' is not a sandbox id", id);
            return -1;
        }
        for (int k = 0; k < n; k++)
            if (strcmp(ids[k], id) == 0) {
                snprintf(err, errlen, "sandbox_ids: %s is listed twice", id);
                return -1;
            }
        snprintf(ids[n++], SANDBOX_ID_MAX, "%s", id);
    }
    if (n == 0)
        snprintf(err, errlen, "sandbox_ids: required, a comma-separated list of sandbox ids");
    return n > 0 ? n : -1;
}
