# corral-egress: the egress proxy sidecar of one sandbox (workerd/egress/README.md).
EGRESS_LIB_SRCS := workerd/egress/ipaddr.c workerd/egress/addr_class.c workerd/egress/hostname.c \
                   workerd/egress/policy.c workerd/egress/decide.c workerd/egress/http_head.c \
                   workerd/egress/egress_conf.c
EGRESS_SRCS := $(EGRESS_LIB_SRCS) workerd/egress/main.c workerd/egress/conn.c \
               workerd/egress/io.c workerd/egress/resolve.c workerd/egress/dial.c \
               workerd/egress/relay.c workerd/egress/reply.c common/http_status.c

BINS += $(BIN)/corral-egress
$(BIN)/corral-egress: $(call objs,$(EGRESS_SRCS))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -ljansson

# Unit tests of the pure parts: policy, blocked ranges, request heads, flags.
$(BIN)/unit-egress: $(call objs,tests/egress/unit_egress.c $(EGRESS_LIB_SRCS))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -ljansson
$(OBJ)/tests/egress/unit_egress.o: CFLAGS += -Iworkerd
