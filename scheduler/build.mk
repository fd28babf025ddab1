SCHED_LIB_SRCS := scheduler/admission.c scheduler/placement.c scheduler/sandbox_store.c \
                  scheduler/sandbox_record.c scheduler/sandbox_wait.c \
                  scheduler/commands.c scheduler/scheduler.c scheduler/lifecycle.c \
                  scheduler/worker_store.c scheduler/route.c scheduler/command_poll.c \
                  scheduler/sandbox_pause.c scheduler/pause.c scheduler/audit.c \
                  scheduler/snapshot_store.c scheduler/snapshot.c scheduler/volume.c \
                  scheduler/telemetry.c scheduler/wake.c
SCHED_LIB := $(BUILD)/lib/libcorral_sched.a

$(SCHED_LIB): $(call objs,$(SCHED_LIB_SRCS))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

BINS += $(BIN)/corral-sched
$(BIN)/corral-sched: $(call objs,scheduler/sched_main.c) $(SCHED_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
