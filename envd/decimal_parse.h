/* A decimal number as untrusted text writes it: digits only. */
#ifndef ENVD_DECIMAL_PARSE_H
#define ENVD_DECIMAL_PARSE_H

/* s as a non-negative decimal: one or more digits and nothing else (no sign,
 * space, suffix or base prefix), at most LLONG_MAX. 0 with *out; -1 (and
 * *out untouched) otherwise. */
int decimal_parse(const char *s, long long *out);

#endif
