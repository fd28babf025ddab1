/*
 * E2B's SDK sends "Basic base64(<user>:)": the password is always empty,
 * so only the name is kept. The access token, not this header, is what
 * authenticates the caller (server.c).
 */
#include "basic_auth_parse.h"
#include "base64.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int basic_auth_user(const char *authorization, char *name, size_t namesz)
{
    unsigned char *raw;
    size_t rawlen;
    char *colon;

    if (authorization == NULL || strncasecmp(authorization, "Basic ", 6) != 0)
        return 0;
    raw = base64_decode(authorization + 6, strlen(authorization + 6), &rawlen);
    if (raw == NULL || rawlen >= namesz) {
        free(raw);
        return -1;
    }
    memcpy(name, raw, rawlen);
    name[rawlen] = '\0';
    free(raw);
    colon = strchr(name, ':');
    if (colon != NULL)
        *colon = '\0';
    return name[0] != '\0';
}
