# corral-egress: the egress proxy sidecar of one sandbox (egress/README.md).
# Like envd it is bind-mounted into a container of corral/base, which has
# neither jansson nor the sanitizer runtimes: one static binary, and sanitizer
# flags are filtered out of its objects even when SANITIZE=1 (the unit tests
# below still run its pure parts under ASan+UBSan).
EGRESS_PURE_SRCS := egress/ipaddr.c egress/addr_class.c egress/hostname.c \
                    egress/policy.c egress/decide.c egress/http_head.c \
                    egress/http_body.c egress/http_edit.c egress/rules.c \
                    egress/placeholder.c egress/settings.c egress/socks5_wire.c \
                    egress/egress_conf.c egress/conf_text.c common/egress_rule.c common/url_decode.c
# Not pure, but the unit tests drive them without a peer (a resolver that is
# not there, a transform with literal values only).
EGRESS_UNIT_SRCS := egress/transform.c egress/transform_audit.c egress/resolver.c egress/io.c
EGRESS_SRCS := $(EGRESS_PURE_SRCS) $(EGRESS_UNIT_SRCS) egress/main.c egress/conn.c \
               egress/resolve.c egress/dial.c egress/outbound.c egress/socks5.c \
               egress/relay.c egress/reply.c egress/live.c egress/tls_conf.c \
               egress/tls_leaf.c egress/tls_io.c egress/intercept.c egress/tls_relay.c \
               egress/audit_flush.c common/http_status.c
EGRESS_OBJ := $(BUILD)/obj-egress
EGRESS_OBJS := $(patsubst %.c,$(EGRESS_OBJ)/%.o,$(EGRESS_SRCS))
EGRESS_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS))

$(EGRESS_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(EGRESS_CFLAGS) -MMD -MP -c $< -o $@

BINS += $(BIN)/corral-egress
# glibc's static getaddrinfo warns that it needs NSS modules at run time; since
# glibc 2.34 files and dns are built in, which is all the proxy uses (libcrypto's
# BIO_gethostbyname, never called, warns the same). The linker's output is
# shown only when the link fails.
$(BIN)/corral-egress: $(EGRESS_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ -lssl -lcrypto -ljansson 2>$(EGRESS_OBJ)/link.log || { cat $(EGRESS_OBJ)/link.log; exit 1; }

# Unit tests of the pure parts: policy, decision, blocked ranges, request heads,
# flags, header rules, placeholders, config files, SOCKS5 messages.
$(BIN)/unit-egress: $(call objs,tests/egress/unit_egress.c tests/egress/unit_rules.c tests/egress/unit_audit.c \
                    $(EGRESS_PURE_SRCS) $(EGRESS_UNIT_SRCS))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -ljansson -lcrypto
$(OBJ)/tests/egress/unit_rules.o $(OBJ)/tests/egress/unit_audit.o: CFLAGS += -I.
$(OBJ)/tests/egress/unit_egress.o: CFLAGS += -I.

-include $(shell find $(EGRESS_OBJ) -name '*.d' 2>/dev/null)
