/* e2b_view.h: sandbox records in the shapes of E2B's spec (Sandbox,
 * SandboxDetail, ListedSandbox). */
#ifndef CORRAL_E2B_VIEW_H
#define CORRAL_E2B_VIEW_H

#include "corral_conf.h"
#include "sandbox_store.h"

#include <jansson.h>

enum e2b_shape { E2B_SANDBOX, E2B_DETAIL, E2B_LISTED };

json_t *e2b_view(const struct sandbox_record *record, enum e2b_shape shape,
                 const struct corral_conf *conf);

#endif
