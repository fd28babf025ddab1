# corral-tunneld: the gateway host's end of worker tunnels (tunneld/README.md).
TUNNELD_SRCS := tunneld/main.c tunneld/upgrade.c tunneld/holders.c tunneld/tunnel.c

BINS += $(BIN)/corral-tunneld
# The store and common refer to each other (the conf's limits): a group.
$(BIN)/corral-tunneld: $(call objs,$(TUNNELD_SRCS)) $(STORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call objs,$(TUNNELD_SRCS)) -Wl,--start-group $(STORE_LIB) $(COMMON_LIB) -Wl,--end-group $(LIBS)
