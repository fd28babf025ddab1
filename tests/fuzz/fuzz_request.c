/* libFuzzer target: the bytes of a request body and query, through every
 * parser a client can reach before any state is touched. */
#include "request.h"
#include "e2b_spec.h"
#include "sandbox_spec_parse.h"
#include "token.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sandbox_spec spec;
    struct token tok;
    char err[256], out[256], *text;
    json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);

    if (j && sandbox_spec_parse(j, &spec, err, sizeof(err)) == 0)
        sandbox_spec_free(&spec);
    if (j && e2b_spec_parse(j, &spec, err, sizeof(err)) == 0)
        sandbox_spec_free(&spec);
    json_decref(j);
    url_decode((const char *)data, size, out, sizeof(out));
    text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    token_parse(text, &tok);
    valid_domain(text);
    free(text);
    return 0;
}
