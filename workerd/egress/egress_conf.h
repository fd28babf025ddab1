/* egress_conf.h: corral-egress's one configuration struct, from its command
 * line: -listen ADDR:PORT -sandbox ID -policy JSON. */
#ifndef CORRAL_EGRESS_CONF_H
#define CORRAL_EGRESS_CONF_H

#include "ipaddr.h"
#include "policy.h"

#include <stddef.h>

#define SANDBOX_ID_MAX 128

struct egress_conf {
    struct ipaddr listen_addr;
    unsigned listen_port;
    char sandbox[SANDBOX_ID_MAX + 1];
    struct policy policy;
};

/* 0, or -1 with err naming the bad flag and why. */
int egress_conf_parse(int argc, char **argv, struct egress_conf *c, char *err, size_t errlen);
void egress_conf_free(struct egress_conf *c);

#endif
