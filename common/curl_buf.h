/* curl_buf.h: an answer body collected by libcurl, for the control channel and
 * the Engine API alike. Bounded, so a runaway answer cannot eat the worker. */
#ifndef CORRAL_CURL_BUF_H
#define CORRAL_CURL_BUF_H

#include <stddef.h>

struct curl_buf {
    char *p; /* NUL-terminated, malloc'ed; the caller frees */
    size_t len;
    size_t max; /* 0: no limit */
};

/* CURLOPT_WRITEFUNCTION with CURLOPT_WRITEDATA = a struct curl_buf. Returning
 * less than given (out of memory, over max) makes curl fail the transfer. */
size_t curl_buf_write(char *ptr, size_t size, size_t nmemb, void *ud);

#endif
