# Unit tests (pure functions) and the libFuzzer target.
# The handlers are linked whole (all but main.c) so router_match's table can
# be checked against the real handler functions.
UNIT_SRCS := tests/unit/unit_main.c tests/unit/unit_data_addr.c tests/unit/unit_token.c \
             tests/unit/unit_router.c tests/unit/unit_query.c tests/unit/unit_conf.c \
             tests/unit/unit_views.c tests/unit/unit_worker_slot.c tests/unit/unit_log.c \
             tests/unit/unit_lifecycle.c tests/unit/unit_rcluster.c tests/unit/unit_volume.c \
             tests/unit/unit_handshake.c tests/unit/unit_worker_push.c tests/unit/unit_heartbeat.c \
             tests/unit/unit_workspace_limits.c tests/unit/unit_metrics_ids.c \
             tests/unit/unit_sandbox_fields.c \
             tests/unit/unit_logs_query.c tests/unit/unit_keys.c tests/unit/unit_volume_create.c \
             tests/unit/unit_e2b_timeout.c tests/unit/unit_e2b_network.c tests/unit/unit_egress_audit.c tests/unit/unit_sandbox_list.c \
             tests/unit/unit_snapshot_parse.c tests/unit/unit_template_build.c \
             tests/unit/unit_registry_token.c tests/unit/unit_registry_route.c \
             tests/unit/unit_tunnel_upgrade.c tunneld/upgrade.c \
             tests/unit/unit_interp_wire.c interp/wire.c \
             tests/unit/unit_interp_outputs.c interp/outputs.c \
             tests/unit/unit_interp_env_code.c interp/env_code.c \
             tests/unit/unit_interp_token.c interp/token_parse.c \
             tests/unit/unit_secrets.c tests/unit/unit_identity.c \
             tests/lib/stderr_capture.c \
             $(filter-out handlers/main.c,$(API_SRCS))
$(BIN)/unit-tests: $(call objs,$(UNIT_SRCS)) $(SCHED_LIB) $(STORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lfcgi $(LIBS) -lcurl

# clang only: -fsanitize=fuzzer. Built from sources, with ASan and UBSan.
FUZZ_SRCS := tests/fuzz/fuzz_request.c handlers/sandbox_spec_parse.c handlers/template_build_parse.c \
             handlers/e2b_spec.c handlers/e2b_network_parse.c handlers/request.c \
             handlers/respond.c $(SCHED_LIB_SRCS) $(STORE_SRCS) $(COMMON_SRCS)
$(BUILD)/fuzz/fuzz_request: $(FUZZ_SRCS)
	@mkdir -p $(dir $@)
	clang -g -O1 -std=gnu11 -D_GNU_SOURCE -Icommon -Istore -Ischeduler -Ihandlers \
	  -fsanitize=fuzzer,address,undefined -o $@ $^ -lfcgi $(LIBS) -lcurl

$(BIN)/bench_sched: $(call objs,tests/bench/bench_sched.c) $(SCHED_LIB) $(STORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# tests/registry/run.sh's signer: common/registry_token.c's tokens, judged by
# a real docker-registry.
$(BIN)/registry-sign: $(call objs,tests/registry/sign_main.c) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# workerd's template builds against the real dockerd (tests/workerd/build_main.c).
BUILD_HARNESS_SRCS := tests/workerd/build_main.c workerd/build_run.c workerd/build_steps.c \
                      workerd/layer_cache.c workerd/layer_prune.c workerd/docker_exec.c workerd/start_ready.c \
                      workerd/docker_api.c workerd/sandbox_body.c workerd/volumes.c \
                      workerd/image_pull.c workerd/build_push.c workerd/registry_auth.c workerd/control.c
$(BIN)/build-harness: $(call objs,$(BUILD_HARNESS_SRCS)) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lcurl
$(OBJ)/tests/workerd/build_main.o: CFLAGS += -Iworkerd -I.
$(OBJ)/tests/unit/unit_tunnel_upgrade.o: CFLAGS += -Itunneld
$(OBJ)/tests/unit/unit_interp_wire.o $(OBJ)/tests/unit/unit_interp_outputs.o \
  $(OBJ)/tests/unit/unit_interp_env_code.o $(OBJ)/tests/unit/unit_interp_token.o: CFLAGS += -Iinterp

# The tunnel's framing over a real socket pair (common/h2bridge.c), standalone.
$(BIN)/unit-h2bridge: $(call objs,tests/unit/unit_h2bridge.c) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
