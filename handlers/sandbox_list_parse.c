/* The native list's query and the metadata filter (sandbox_list_parse.h). */
#include "sandbox_list_parse.h"

#include <stdio.h>
#include <string.h>

/* Read with request_query, as the route always has: a value that does not
 * decode (badly encoded, too long) keeps what decoded before the fault, so
 * the buffers start zeroed to end it. */
int sandbox_list_query_parse(const struct request *req, struct sandbox_list_query *q, char *err,
                             size_t errlen)
{
    char state[32] = "";

    request_query(req, "state", state, sizeof(state));
    q->wanted = sandbox_state_parse(state);
    if (*state && q->wanted == SANDBOX_STATE_UNKNOWN) {
        snprintf(err, errlen,
                 "state: must be one of pending, running, pausing, paused, resuming, exited, "
                 "lost, error");
        return -1;
    }
    memset(q->metadata, 0, sizeof(q->metadata));
    request_query(req, "metadata", q->metadata, sizeof(q->metadata));
    return 0;
}

int metadata_matches(const json_t *meta, const char *filter)
{
    char buf[1024], *save = NULL, *pair;

    snprintf(buf, sizeof(buf), "%s", filter);
    for (pair = strtok_r(buf, "&", &save); pair; pair = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(pair, '='), k[256], v[768];
        const json_t *have;
        if (!eq || url_decode(pair, (size_t)(eq - pair), k, sizeof(k)) ||
            url_decode(eq + 1, strlen(eq + 1), v, sizeof(v)))
            return 0;
        have = json_object_get(meta, k);
        if (!json_is_string(have) || strcmp(json_string_value(have), v) != 0)
            return 0;
    }
    return 1;
}
