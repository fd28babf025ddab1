/* addr_class.h: the ranges no sandbox may reach whatever its policy says
 * (ARCHITECTURE.md "Network isolation"). Pure. */
#ifndef CORRAL_EGRESS_ADDR_CLASS_H
#define CORRAL_EGRESS_ADDR_CLASS_H

#include "ipaddr.h"

#include <stdbool.h>

bool addr_is_blocked(const struct ipaddr *a);

#endif
