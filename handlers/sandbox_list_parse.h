/* sandbox_list_parse.h: the query of the native GET /v1/sandboxes (state,
 * metadata) and the metadata filter both lists share (pure: reads only
 * req->query; h_sandboxes.c and h_e2b_list.c read the store and answer). */
#ifndef CORRAL_SANDBOX_LIST_PARSE_H
#define CORRAL_SANDBOX_LIST_PARSE_H

#include "request.h"
#include "sandbox_codec.h"

#include <jansson.h>
#include <stddef.h>

struct sandbox_list_query {
    enum sandbox_state wanted; /* SANDBOX_STATE_ANY when state is absent */
    char metadata[1024];       /* the filter, "" for none */
};

/* 0 with q filled, or -1 with err naming the parameter (answer 400). */
int sandbox_list_query_parse(const struct request *req, struct sandbox_list_query *q, char *err,
                             size_t errlen);

/* The metadata filter: "k=v&k2=v2" (URL-encoded as one query value, as E2B
 * sends it); 1 when meta has every pair. */
int metadata_matches(const json_t *meta, const char *filter);

#endif
