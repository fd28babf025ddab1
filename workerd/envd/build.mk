# envd: the in-sandbox agent, one static binary (bind-mounted read-only into
# every sandbox). Static and ASan do not mix, so sanitizer flags are filtered
# out of this binary's objects even when SANITIZE=1.
# common/http_status.c and common/url_decode.c are compiled in too (pure, no
# sanitizer needed).
ENVD_SRCS := $(wildcard workerd/envd/*.c) common/http_status.c common/url_decode.c
ENVD_OBJS := $(call objs,$(ENVD_SRCS))
ENVD_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS))
ENVD_LIBS := -ljansson -lcrypto -lz -lpthread

BINS += $(BIN)/envd

$(ENVD_OBJS): CFLAGS := $(ENVD_CFLAGS)

$(BIN)/envd: $(ENVD_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(ENVD_LIBS)
