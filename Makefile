# Corral: the one entry point. make | make test | make bench | make up | make down | make deb
#
# Each component directory contributes a build.mk that appends to BINS.
# SANITIZE=1 builds the same tree with ASan+UBSan into build-san/.

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
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -Icommon -Istore -Ischeduler -Ihandlers -Itests/lib $(SANFLAGS)
LDFLAGS += -pthread $(SANFLAGS)
LIBS    := -lhiredis -ljansson -lcrypto -lm -lnghttp2

BINS :=
.DEFAULT_GOAL := all

objs = $(patsubst %.c,$(OBJ)/%.o,$(1))

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

include common/build.mk
include store/build.mk
include scheduler/build.mk
include handlers/build.mk
include envd/build.mk
include workerd/build.mk
include egress/build.mk
include tunneld/build.mk
include interp/build.mk
include tests/build.mk

.PHONY: all deps test bench up down images clean format lint module

all: $(BINS) module

# ngx_http_corral_module.so, built against Debian's nginx-dev (module/build.sh).
NGINX_MODULE := build/nginx-module/ngx_http_corral_module.so
module: $(NGINX_MODULE)
$(NGINX_MODULE): module/ngx_http_corral_module.c module/ngx_http_corral_gateway.c module/ngx_http_corral_token.c module/ngx_http_corral_cache.c module/ngx_http_corral_balancer.c module/ngx_http_corral_keep.c module/ngx_http_corral_module.h module/config module/build.sh common/data_addr.c common/data_addr.h common/egress_rule.c common/egress_rule.h
	@bash module/build.sh build/nginx-module >/dev/null

# Debian packages the build, the tests and the local stack need; installed when missing.
deps:
	@bash tests/lib/deps.sh

test: deps
	@bash tests/run.sh

bench: deps all
	@bash tests/bench/run.sh

up: deps all
	@CORRAL_WORKERD=$${CORRAL_WORKERD:-1} bash conf/stack.sh up

down:
	@bash conf/stack.sh down

# The template images: corral/base (debootstrap + docker import, cached) and
# corral/code-interpreter (templates/code-interpreter-v1, on base).
images: deps all
	@bash tests/lib/docker.sh start
	@bash tests/lib/images.sh
	@bash templates/code-interpreter-v1/build.sh

# The one list of C that is not ours to format or lint: the nginx module keeps
# nginx's own order, naming and layout, which .clang-format would rewrite (a
# 3,000-line diff). Both targets below leave these paths out.
STYLE_EXCLUDE := module/
C_FILES = $$(git ls-files $(1) | grep -v $(foreach p,$(STYLE_EXCLUDE),-e '^$(p)'))

format:
	clang-format -i $(call C_FILES,'*.c' '*.h')

LINT_SRCS = $(call C_FILES,'*.c')
lint:
	bash tests/lint/keys_once.sh
	bash tests/lint/layout.sh
	bash tests/lint/sleeps.sh
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability --inline-suppr \
	  --suppress=missingIncludeSystem -Icommon -Istore -Ischeduler -Ihandlers -Iworkerd -Ienvd -Itunneld -Iinterp -I. -Itests/lib $(LINT_SRCS)
	clang-tidy --quiet --warnings-as-errors='*' $(LINT_SRCS) -- -std=gnu11 -D_GNU_SOURCE -Icommon -Istore \
	  -Ischeduler -Ihandlers -Iworkerd -Ienvd -Itunneld -Iinterp -I. -Itests/lib
	clang-format --dry-run --Werror $(LINT_SRCS)

clean:
	rm -rf build build-san

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

# --- install (issue 8) ------------------------------------------------------
# make install [DESTDIR=/staging/root] [PREFIX=/usr/local]: binaries and the
# nginx module under PREFIX, systemd units in DESTDIR/lib/systemd/system,
# example configs in DESTDIR/etc/corral (conf/install.sh, conf/systemd/README.md).
PREFIX  ?= /usr/local
DESTDIR ?=
.PHONY: install
install: all
	@bash conf/install.sh "$(DESTDIR)" "$(PREFIX)" "$(BIN)" "$(NGINX_MODULE)"
# --- end install --------------------------------------------------------------

# --- deb (issue 15) -----------------------------------------------------------
# make deb: corral-api, corral-workerd and libnginx-mod-http-corral with
# dpkg-buildpackage (debian/), into build/deb/, lintian-checked
# (debian/build-debs.sh; docs/decisions/0055).
.PHONY: deb
deb: deps
	@bash debian/build-debs.sh
# --- end deb ------------------------------------------------------------------
