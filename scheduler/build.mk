# scheduler: the rules of a create, a library linked by corral-api, and
# corral-sched, the sweeper (scheduler/README.md).
SCHED_LIB_SRCS := $(filter-out scheduler/sched_main.c,$(wildcard scheduler/*.c))
SCHED_LIB := $(BUILD)/lib/libcorral_sched.a

$(SCHED_LIB): $(call objs,$(SCHED_LIB_SRCS))
	@mkdir -p $(dir $@)
	@rm -f $@
	$(AR) rcs $@ $^

BINS += $(BIN)/corral-sched
$(BIN)/corral-sched: $(call objs,scheduler/sched_main.c) $(SCHED_LIB) $(STORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
