API_SRCS := $(filter-out handlers/corralctl.c handlers/ctl_%.c,$(wildcard handlers/*.c))

BINS += $(BIN)/corral-api $(BIN)/corralctl
$(BIN)/corral-api: $(call objs,$(API_SRCS)) $(SCHED_LIB) $(STORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lfcgi $(LIBS) -lcurl

# corralctl records what it mints in the audit trail and reads it (store/audit.c).
$(BIN)/corralctl: $(call objs,handlers/corralctl.c handlers/ctl_registry_gc.c handlers/audit_view.c \
                  handlers/sandbox_view.c handlers/worker_view.c) \
                  $(SCHED_LIB) $(STORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lcurl
