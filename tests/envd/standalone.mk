# Builds envd alone through its fragment (workerd/envd/build.mk), with the same
# variables the top-level Makefile defines, so the envd tests do not depend on
# the rest of the tree building. Run from the repository root:
#   make -f tests/envd/standalone.mk
CC      ?= cc
SANITIZE ?= 0
ifeq ($(SANITIZE),1)
BUILD   ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD   ?= build
SANFLAGS :=
endif
BIN     := $(BUILD)/bin
OBJ     := $(BUILD)/obj
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -Icommon -Ischeduler $(SANFLAGS)
BINS    :=
objs = $(patsubst %.c,$(OBJ)/%.o,$(1))

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

include workerd/envd/build.mk

.DEFAULT_GOAL := envd
.PHONY: envd
envd: $(BIN)/envd

-include $(shell find $(OBJ)/workerd/envd -name '*.d' 2>/dev/null)
