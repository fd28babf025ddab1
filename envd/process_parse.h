/*
 * The fields of process.Process requests parsed (process_service.c runs
 * them): a command's argv, a PTY size, a signal, a process selector, the
 * input to send. Pure; tests/envd/unit_process.c checks each rule.
 */
#ifndef ENVD_PROCESS_PARSE_H
#define ENVD_PROCESS_PARSE_H

#include "connect_rpc.h"
#include "process.h"

#include <jansson.h>
#include <stddef.h>

/* argv = config's cmd followed by its args (malloc'ed array, NULL-terminated;
 * the strings point into config, which must outlive it). NULL with err set
 * when cmd is absent or empty, or an arg is not a string. */
const char **process_parse_argv(json_t *config, struct rpc_error *err);

/* A PtyConfig {size: {cols, rows}} into spec->pty, cols and rows (80x24 by
 * default); nothing when pty is absent or null. 0 ok; -1 with err set when
 * a size is not an integer up to 65535. */
int process_parse_pty(json_t *pty, struct proc_spec *spec, struct rpc_error *err);

/* A Signal: a number as it is, or "SIGNAL_SIGKILL"/"SIGNAL_SIGTERM"; 0 for
 * anything else (the caller refuses it, as it does a number out of range). */
int process_parse_signal(json_t *v);

/* A ProcessSelector {pid} or {tag}: *pid (0 when none) and *tag (NULL when
 * none, pointing into sel). 0 ok; -1 with err set when there is neither or
 * pid is not a uint32. */
int process_parse_selector(json_t *sel, unsigned long *pid, const char **tag,
                           struct rpc_error *err);

/* SendInput's input {stdin|pty: base64}, pty first: 1 with the bytes
 * (malloc'ed) in *data, *len and *to_pty; 0 when there are none (an empty
 * bytes field is left out of the JSON); -1 with err set when not base64. */
int process_parse_input(json_t *input, unsigned char **data, size_t *len, int *to_pty,
                        struct rpc_error *err);

#endif
