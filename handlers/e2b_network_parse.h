/* e2b_network_parse.h: E2B's network.rules, network.egressProxy and iam.tokens
 * read into the parts of an egress policy the proxy acts on (decision 0091):
 *   "rules":    {"api.example.com": [{"headers": {"Authorization": "..."}}]}
 *   "upstream": {"address": "host:port", "username": "...", "password": "..."}
 *   "iam":      {"tokens": {"aws": {"audience": "...", "tokenType": "JWT-SVID"}}}
 * Header values and the password are secrets: common/egress_seal.h seals them
 * before they are stored. Pure (jansson only). */
#ifndef CORRAL_E2B_NETWORK_PARSE_H
#define CORRAL_E2B_NETWORK_PARSE_H

#include <jansson.h>
#include <stddef.h>

#define E2B_RULE_HOSTS_MAX 64 /* hosts in one rules object */
#define E2B_RULES_PER_HOST 8  /* rules in one host's list */
#define E2B_HEADERS_MAX 16    /* headers in one transform */
#define E2B_HEADER_VALUE_MAX 8192
#define E2B_IAM_TOKENS_MAX 16

/* rules (null or absent: *out NULL) as the policy's "rules". An identity
 * placeholder must name a token of tokens (the policy's iam.tokens object, or
 * NULL for none). field names the input in messages ("network.rules"). 0, or
 * -1 with err. */
int e2b_rules_parse(const json_t *rules, const json_t *tokens, const char *field, json_t **out,
                    char *err, size_t errlen);

/* egressProxy (null or absent: *out NULL) as the policy's "upstream". */
int e2b_upstream_parse(const json_t *proxy, const char *field, json_t **out, char *err,
                       size_t errlen);

/* iam (null, absent or without tokens: *out NULL) as the policy's "iam". */
int e2b_iam_parse(const json_t *iam, json_t **out, char *err, size_t errlen);

/* 1 when text holds a "${e2b." placeholder. */
int e2b_has_placeholder(const char *text);

#endif
