/* filesystem.Filesystem: the RPC handlers. */
#ifndef ENVD_FILESYSTEM_SERVICE_H
#define ENVD_FILESYSTEM_SERVICE_H

#include "connect_rpc.h"

json_t *fs_stat(struct rpc_call *call, json_t *in);
json_t *fs_make_dir(struct rpc_call *call, json_t *in);
json_t *fs_move(struct rpc_call *call, json_t *in);
json_t *fs_list_dir(struct rpc_call *call, json_t *in);
json_t *fs_remove(struct rpc_call *call, json_t *in);
int fs_watch_dir(struct rpc_call *call, json_t *in);
json_t *fs_create_watcher(struct rpc_call *call, json_t *in);
json_t *fs_get_watcher_events(struct rpc_call *call, json_t *in);
json_t *fs_remove_watcher(struct rpc_call *call, json_t *in);

#endif
