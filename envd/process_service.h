/* process.Process: the RPC handlers. */
#ifndef ENVD_PROCESS_SERVICE_H
#define ENVD_PROCESS_SERVICE_H

#include "connect_rpc.h"

int process_start(struct rpc_call *call, json_t *in);
int process_connect(struct rpc_call *call, json_t *in);
json_t *process_list(struct rpc_call *call, json_t *in);
json_t *process_send_input(struct rpc_call *call, json_t *in);
json_t *process_send_signal(struct rpc_call *call, json_t *in);
json_t *process_close_stdin(struct rpc_call *call, json_t *in);
json_t *process_update(struct rpc_call *call, json_t *in);

#endif
