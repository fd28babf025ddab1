# corral-interp: the code interpreter's server in a sandbox (interp/README.md).
# envd's HTTP/1.1 server files and common's pure ones are compiled in.
INTERP_SRCS := interp/main.c interp/routes.c interp/contexts.c interp/kernel.c interp/wire.c \
               interp/outputs.c interp/env_code.c interp/token.c interp/token_parse.c \
               envd/http.c envd/http_parse.c envd/http_serve.c \
               common/http_status.c common/url_decode.c common/secret.c

BINS += $(BIN)/corral-interp
$(call objs,$(filter interp/%,$(INTERP_SRCS))): CFLAGS += -Iinterp -Ienvd
$(BIN)/corral-interp: $(call objs,$(INTERP_SRCS))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -ljansson -lzmq -lssl -lcrypto -pthread
