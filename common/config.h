/* config.h: the `key = value` file format every Corral binary reads.
 * Each binary owns its struct and validates its own keys; this file only splits
 * lines, so that a bad key is reported with its file and line. */
#ifndef CORRAL_CONFIG_H
#define CORRAL_CONFIG_H

#include <stddef.h>

/* Returns 0 when the key is accepted; otherwise writes why into err. */
typedef int (*config_set_fn)(void *ud, const char *key, const char *value, char *err,
                             size_t errlen);

/* Reads path line by line; '#' starts a comment. Returns 0, or -1 with err set
 * to "PATH:LINE: message". */
int config_load(const char *path, config_set_fn set, void *ud, char *err, size_t errlen);

/* Parses a base-10 integer in [min, max]; 0 on success. */
int config_parse_int(const char *value, long min, long max, long *out);

#endif
