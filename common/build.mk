COMMON_SRCS := $(wildcard common/*.c)
COMMON_LIB  := $(BUILD)/lib/libcorral_common.a

$(COMMON_LIB): $(call objs,$(COMMON_SRCS))
	@mkdir -p $(dir $@)
	@rm -f $@
	$(AR) rcs $@ $^
