/* check.h: the assertion of Corral's C unit tests. Each test file defines
 * `static int passed, failed;` through CHECK_COUNTERS and prints
 * "N passed, N failed" with CHECK_SUMMARY. */
#ifndef CORRAL_CHECK_H
#define CORRAL_CHECK_H

#include <stdio.h>

#define CHECK_COUNTERS static int passed, failed

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
        }                                                                                          \
    } while (0)

#define CHECK_SUMMARY() (printf("%d passed, %d failed\n", passed, failed), failed ? 1 : 0)

#endif
