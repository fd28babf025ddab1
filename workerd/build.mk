# workerd: one per Docker host (see workerd/README.md).
WORKERD_SRCS := workerd/main.c workerd/worker_conf.c workerd/docker_api.c workerd/containers.c \
                workerd/probe.c workerd/state_file.c workerd/control.c workerd/sbtable.c \
                workerd/states.c workerd/commands.c \
                workerd/backoff.c workerd/enrol.c workerd/reconcile.c workerd/netsweep.c workerd/apply.c \
                workerd/heartbeat.c workerd/poller.c workerd/lease.c workerd/egress_pool.c workerd/health.c workerd/deaths.c workerd/events.c workerd/envd_ready.c workerd/dataplane.c workerd/apply_batch.c workerd/inflight.c \
                workerd/dataport.c workerd/dataport_head.c workerd/dataport_frame.c workerd/dataport_conn.c workerd/dataport_pool.c workerd/dataport_io.c workerd/netguard.c workerd/netguard_lan.c workerd/sbnet.c workerd/sandbox_body.c \
                workerd/egress_proxy.c workerd/hostcaps.c workerd/freeze.c workerd/apply_pause.c workerd/stopped.c \
                workerd/subvol_drop.c workerd/egress_change.c workerd/tar_one.c workerd/snapshots.c workerd/volumes.c \
                workerd/volume_req.c workerd/volume_files.c workerd/volume_serve.c \
                workerd/docker_logs.c workerd/stats.c workerd/sandbox_sample.c workerd/metrics_thread.c \
                workerd/agent_conf.c workerd/agent_spawn.c workerd/agent_sessions.c workerd/agent_audit.c \
                workerd/registry_auth.c workerd/image_pull.c workerd/docker_exec.c workerd/start_ready.c \
                workerd/build_steps.c workerd/layer_cache.c workerd/layer_prune.c workerd/build_run.c workerd/build_push.c \
                workerd/build_thread.c workerd/template_images.c workerd/warm_conf.c workerd/warm_pool.c workerd/warm_record.c workerd/warm_index.c \
                workerd/halt_pidfd.c workerd/tunnel_dial.c workerd/tunnel_client.c \
                workerd/egress_ca.c workerd/egress_dir.c workerd/egress_resolver.c workerd/egress_live.c

BINS += $(BIN)/workerd
$(BIN)/workerd: $(call objs,$(WORKERD_SRCS)) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lcurl -lnftables

# Unit tests of workerd's pure functions (tests/workerd/unit_workerd.c).
UNIT_WORKERD_SRCS := tests/workerd/unit_workerd.c tests/workerd/unit_dataport.c tests/workerd/unit_dataport_frame.c \
                     tests/workerd/unit_telemetry.c tests/workerd/unit_volume.c tests/workerd/unit_commands.c tests/workerd/unit_build.c tests/workerd/unit_warm.c \
                     tests/lib/stderr_capture.c $(filter-out workerd/main.c,$(WORKERD_SRCS))
$(BIN)/unit-workerd: $(call objs,$(UNIT_WORKERD_SRCS)) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lcurl -lnftables
$(OBJ)/tests/workerd/unit_workerd.o $(OBJ)/tests/workerd/unit_dataport.o $(OBJ)/tests/workerd/unit_dataport_frame.o \
$(OBJ)/tests/workerd/unit_telemetry.o $(OBJ)/tests/workerd/unit_volume.o \
$(OBJ)/tests/workerd/unit_commands.o $(OBJ)/tests/workerd/unit_build.o $(OBJ)/tests/workerd/unit_warm.o: CFLAGS += -Iworkerd -I.
