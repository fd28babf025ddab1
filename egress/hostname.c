#include "hostname.h"

#include <ctype.h>
#include <string.h>

static int label_char(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '_';
}

int hostname_normalize(const char *in, char *out)
{
    size_t len = strlen(in);

    if (len > 0 && in[len - 1] == '.')
        len--;
    if (len == 0 || len > HOSTNAME_MAX)
        return -1;
    size_t label = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == '.') {
            if (label == 0)
                return -1;
            label = 0;
        } else if (!label_char(c) || ++label > 63) {
            return -1;
        }
        out[i] = (char)tolower(c);
    }
    out[len] = '\0';
    return label == 0 ? -1 : 0;
}

int hostname_resolvable(const char *name)
{
    const char *dot = strrchr(name, '.');
    return isalpha((unsigned char)(dot ? dot[1] : name[0]));
}
