# envd: the in-sandbox agent, one static binary (bind-mounted read-only into
# every sandbox). Static and ASan do not mix, so sanitizer flags are filtered
# out of this binary's objects even when SANITIZE=1.
# common/http_status.c and common/url_decode.c are compiled in too (pure, no
# sanitizer needed).
ENVD_SRCS := $(wildcard envd/*.c) common/http_status.c common/url_decode.c
ENVD_OBJS := $(call objs,$(ENVD_SRCS))
ENVD_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS))
ENVD_LIBS := -ljansson -lcrypto -lz -lpthread

BINS += $(BIN)/envd

$(ENVD_OBJS): CFLAGS := $(ENVD_CFLAGS)

$(BIN)/envd: $(ENVD_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(ENVD_LIBS)

# Unit tests of envd's parsers (tests/envd/unit_envd.c, which runs the
# others: unit_gate.c, unit_http.c, unit_auth.c, unit_connect.c,
# unit_files.c, unit_process.c, unit_users.c, unit_init.c). Unlike envd, built with the
# tree's CFLAGS (so under ASan+UBSan with SANITIZE=1), from objects of their
# own.
UNIT_ENVD_OBJ := $(BUILD)/obj-unit-envd
UNIT_ENVD_TESTS := envd gate http auth connect files process users init trust
UNIT_ENVD_SRCS := $(UNIT_ENVD_TESTS:%=tests/envd/unit_%.c) $(filter-out envd/main.c,$(ENVD_SRCS))
UNIT_ENVD_OBJS := $(patsubst %.c,$(UNIT_ENVD_OBJ)/%.o,$(UNIT_ENVD_SRCS))

$(UNIT_ENVD_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ienvd -MMD -MP -c $< -o $@

$(BIN)/unit-envd: $(UNIT_ENVD_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -ljansson -lcrypto -lz

-include $(shell find $(UNIT_ENVD_OBJ) -name '*.d' 2>/dev/null)
