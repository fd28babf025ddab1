#!/usr/bin/env bash
# tests/dataplane/run.sh: the data-plane tests, end to end and real:
#   the real stack (conf/stack.sh up: Redis, 2 corral-api, corral-sched, its
#   nginx) in a temporary run dir, for the control plane and the
#   /v1/internal/route lookup;
#   a second nginx of our own (its own config, ports and self-signed TLS) with
#   ngx_http_corral_module loaded (module/build.sh): the gateway under test;
#   workerd's data port (workerd/dataport.c, run by dataport_main);
#   the real envd on loopback addresses as the sandboxes.
# Then `node --test` over tests/dataplane/*.test.mjs (or the files given as
# arguments). Stops everything it started. Must run as root (envd switches
# users). A missing tool is a failure, never a skip.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

die() { echo "dataplane: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (envd switches users)"
for t in nginx redis-server node openssl curl cc; do command -v $t >/dev/null || die "$t is missing (make deps)"; done
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || die "need Node >= 20"

# Our own build dir, so as not to race a concurrent `make` in build/.
BUILD=build/dataplane
make -s -j2 BUILD=$BUILD/stack $BUILD/stack/bin/corral-api $BUILD/stack/bin/corralctl \
    $BUILD/stack/bin/corral-sched $BUILD/stack/bin/corral-tunneld $BUILD/stack/bin/envd >/dev/null
SO=$(module/build.sh "$ROOT/build/nginx-module")
# DP_CFLAGS: e.g. "-fsanitize=address,undefined" to run the data port under sanitizers
cc -O2 -g ${DP_CFLAGS:-} -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -Icommon -Iworkerd \
    -o $BUILD/dataport_main tests/dataplane/dataport_main.c workerd/dataport.c workerd/dataport_head.c workerd/dataport_frame.c workerd/dataport_conn.c workerd/dataport_pool.c workerd/dataport_io.c \
    common/secret.c common/url_decode.c common/log.c common/log_format.c common/http_status.c common/clock.c \
    common/token.c common/volume_names.c common/volume_sig.c common/fd_limit.c \
    -ljansson -lcrypto

# shellcheck source=../lib/ports.sh
. "$ROOT/tests/lib/ports.sh"

T=$(mktemp -d /tmp/corral-dataplane.XXXXXX)
chmod 755 "$T"
NGX="$T/nginx"
read -r CORRAL_PORT CORRAL_REDIS_PORT GW_PORT NOCACHE_PORT DP_PORT DEAD_PORT < <(free_ports 6)
[ -n "$DEAD_PORT" ] || { echo "dataplane: no free ports"; exit 1; }
export CORRAL_RUN="$T/stack" CORRAL_PORT CORRAL_REDIS_PORT CORRAL_PROFILE=test
export CORRAL_BUILD="$ROOT/$BUILD/stack/bin"
# Workers' data ports, listed exactly as on a one-host install (decision
# 0061): the data port (on 127.0.0.1 and ::1, so that the handshake's
# canonical form can be seen), and one where nothing listens (the unreachable
# worker). Every other loopback address and port is refused: ssrf.test.mjs
# tries them (127.0.0.2, where the sandboxes' envd also runs, Redis's port).
export CORRAL_WORKER_ADDRS="127.0.0.1:$DP_PORT [::1]:$DP_PORT 127.0.0.1:$DEAD_PORT"
DP_PID=""
ok=0

cleanup() {
    set +e
    [ -f "$NGX/nginx.pid" ] && nginx -p "$NGX" -c "$NGX/nginx.conf" -e "$NGX/error.log" -s quit 2>/dev/null
    [ -n "$DP_PID" ] && kill "$DP_PID" 2>/dev/null
    conf/stack.sh down >/dev/null 2>&1
    for _ in $(seq 1 50); do [ -f "$NGX/nginx.pid" ] || break; sleep 0.1; done
    if [ $ok = 1 ]; then rm -rf "$T"; else echo "dataplane: logs kept in $T" >&2; fi
}
trap cleanup EXIT

conf/stack.sh up >/dev/null

# the gateway's own TLS: a self-signed certificate for localhost and *.domain
DOMAIN=corral.test
mkdir -p "$NGX/tls" "$NGX/tmp"
openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj "/CN=corral dataplane test" \
    -addext "subjectAltName=DNS:localhost,DNS:*.$DOMAIN,IP:127.0.0.1" \
    -keyout "$NGX/tls/server.key" -out "$NGX/tls/server.crt" 2>/dev/null
render() { # template port bypass name
    sed -e "s|@SO@|$SO|g" -e "s|@DIR@|$NGX|g" -e "s|@RUN@|$CORRAL_RUN|g" -e "s|@PORT@|$2|g" \
        -e "s|@DOMAIN@|$DOMAIN|g" -e "s|@BYPASS@|$3|g" -e "s|@NAME@|$4|g" -e "s|@USER@|$(id -un)|g" \
        -e "s|@WORKER_ALLOW@|$CORRAL_WORKER_ADDRS|g" "$1"
}
render tests/dataplane/nginx.conf.in - - - > "$NGX/nginx.conf"
render tests/dataplane/server.conf.in "$GW_PORT" off cached > "$NGX/server-cached.conf"
render tests/dataplane/server.conf.in "$NOCACHE_PORT" on bypass > "$NGX/server-bypass.conf"
nginx -t -q -p "$NGX" -c "$NGX/nginx.conf" -e "$NGX/error.log" || die "nginx rejected $NGX/nginx.conf"
nginx -p "$NGX" -c "$NGX/nginx.conf" -e "$NGX/error.log"

touch "$T/dataport.key" "$T/dataport.map"
chmod 600 "$T/dataport.key"
$BUILD/dataport_main "127.0.0.1:$DP_PORT" "$T/dataport.key" "$T/dataport.map" 2>"$T/dataport.log" &
DP_PID=$!

for _ in $(seq 1 50); do
    curl -s -o /dev/null --cacert "$NGX/tls/server.crt" "https://localhost:$GW_PORT/" && \
        (echo > /dev/tcp/127.0.0.1/$DP_PORT) 2>/dev/null && break
    # sleep: between tries of this loop (50 of them).
    sleep 0.1
done

export CORRAL_URL="https://localhost:$CORRAL_PORT"
export NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt"
export DP_GATEWAY_PORT=$GW_PORT DP_NOCACHE_PORT=$NOCACHE_PORT DP_DIR="$NGX" DP_DATAPORT="127.0.0.1:$DP_PORT"
export DP_DEADPORT="127.0.0.1:$DEAD_PORT"
export DP_DOMAIN=$DOMAIN DP_KEYFILE="$T/dataport.key" DP_MAPFILE="$T/dataport.map"
export DP_GATEWAY_CA="$NGX/tls/server.crt" ENVD_BIN="$ROOT/$BUILD/stack/bin/envd"
export DP_REDIS_PORT=$CORRAL_REDIS_PORT DP_ERROR_LOG="$NGX/error.log" DP_MODULE_SO="$SO"
# the data port's pid: stray.test.mjs freezes it for a moment (a busy loop, made certain)
export DP_PID

files=("$@")
[ ${#files[@]} -gt 0 ] || files=(tests/dataplane/*.test.mjs)
# one file at a time: the 100 MB test wants both cores
node --test --test-concurrency=1 "${files[@]}"
ok=1
