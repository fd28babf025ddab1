API_SRCS := $(filter-out handlers/corralctl.c,$(wildcard handlers/*.c))

BINS += $(BIN)/corral-api $(BIN)/corralctl
$(BIN)/corral-api: $(call objs,$(API_SRCS)) $(SCHED_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lfcgi $(LIBS)

$(BIN)/corralctl: $(call objs,handlers/corralctl.c) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
