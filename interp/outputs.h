/* outputs.h: what a kernel says on iopub, as the lines of /execute's NDJSON
 * answer that @e2b/code-interpreter reads (decision 0088): stream ->
 * {"type":"stdout"|"stderr","text"}, execute_result and display_data ->
 * {"type":"result","is_main_result", one key per format}, error ->
 * {"type":"error","name","value","traceback"}. Pure: jansson only. */
#ifndef CORRAL_INTERP_OUTPUTS_H
#define CORRAL_INTERP_OUTPUTS_H

#include <jansson.h>

/* The MIME type Corral's chart extractor gives a figure's data (decision
 * 0088): answered as the result's "chart". */
#define OUTPUTS_CHART_MIME "application/vnd.corral.chart+json"
#define OUTPUTS_DATA_MIME "application/vnd.corral.data+json"

/* The line for an iopub message of msg_type with content, or NULL when it
 * makes none (status, execute_input, clear_output, anything unknown). */
json_t *outputs_line(const char *msg_type, const json_t *content);

/* The last line: {"type":"number_of_executions","execution_count":n}. */
json_t *outputs_count(long long n);

#endif
