#include "curl_buf.h"

#include <stdlib.h>
#include <string.h>

size_t curl_buf_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct curl_buf *b = ud;
    size_t n = size * nmemb;
    char *p;

    if (b->max && b->len + n > b->max)
        return 0;
    p = realloc(b->p, b->len + n + 1);
    if (!p)
        return 0;
    memcpy(p + b->len, ptr, n);
    b->len += n;
    p[b->len] = '\0';
    b->p = p;
    return n;
}
