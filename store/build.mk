# store: every Redis record and its one home (store/README.md), a library
# linked by corral-api, corralctl and corral-sched.
STORE_SRCS := $(wildcard store/*.c)
STORE_LIB  := $(BUILD)/lib/libcorral_store.a

$(STORE_LIB): $(call objs,$(STORE_SRCS))
	@mkdir -p $(dir $@)
	@rm -f $@
	$(AR) rcs $@ $^
