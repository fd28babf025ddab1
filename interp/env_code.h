/* env_code.h: a call's env_vars (POST /execute) as code the context's
 * kernel runs silently around the cell (decision 0088): set before, put
 * back after, so the next call sees the context's own environment. Pure:
 * jansson only. */
#ifndef CORRAL_INTERP_ENV_CODE_H
#define CORRAL_INTERP_ENV_CODE_H

#include <jansson.h>

/* vars (an object of strings) set in lang's kernel, the old values kept;
 * the caller frees. NULL when lang has no such code yet, or vars is no
 * object of strings (why in err). */
char *env_code_set(const char *lang, const json_t *vars, char *err, size_t errlen);

/* vars (an object of strings) set for good in a python kernel: the claim's
 * env vars, for a kernel started before them. NULL when vars is no object of
 * strings. The caller frees. */
char *env_code_apply(const json_t *vars);

/* What env_code_set changed, put back; the caller frees. */
char *env_code_restore(const char *lang);

#endif
