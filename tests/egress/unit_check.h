/* unit_check.h: the CHECK of corral-egress's unit tests, counted in
 * unit_egress.c's totals (unit_passed, unit_failed). */
#ifndef EGRESS_UNIT_CHECK_H
#define EGRESS_UNIT_CHECK_H

#include <stdio.h>

int *unit_passed(void);
int *unit_failed(void);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            (*unit_passed())++;                                                                    \
        } else {                                                                                   \
            (*unit_failed())++;                                                                    \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
        }                                                                                          \
    } while (0)

#endif
