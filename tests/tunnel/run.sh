#!/usr/bin/env bash
# tests/tunnel/run.sh: a worker reached only through its tunnel (issue 29,
# decision 0087). A one-host stack with corral-tunneld and one workerd with
# `tunnel = on` (its data port a unix socket, no TCP port), the real e2b SDK
# over HTTPS: tests/tunnel/*.test.mjs (what the tunnel must refuse and how
# it fails and comes back), then the e2b suite's files about reaching a
# sandbox (commands, files, PTYs, watch, getHost) against the tunnelled
# worker's sandboxes, by host and by headers.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
# shellcheck source=tests/lib/suite.sh
. tests/lib/suite.sh

export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-tunnel.XXXXXX)
export CORRAL_PORT=${CORRAL_TUNNEL_TEST_PORT:-19043} CORRAL_REDIS_PORT=${CORRAL_TUNNEL_TEST_REDIS_PORT:-16990}
export CORRAL_PROFILE=test CORRAL_BUILD=${CORRAL_BUILD:-$ROOT/build/bin} CORRAL_WORKERD=1 CORRAL_TUNNEL=1
export CORRAL_WORKERD_DATA_PORT=${CORRAL_TUNNEL_TEST_WORKERD_PORT:-17931} CORRAL_FLEET_SHARE=100
export NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt" CORRAL_URL="https://localhost:$CORRAL_PORT"
export ASAN_OPTIONS="detect_leaks=1:log_path=$CORRAL_RUN/log/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$CORRAL_RUN/log/ubsan"

(cd tests/e2b && npm ci --no-audit --no-fund --loglevel=error) || { echo "npm ci failed"; exit 1; }
make -s all >/dev/null || { echo "build failed"; exit 1; }
mkdir -p "$CORRAL_RUN/log"
suite_stack_up || exit 1

export E2B_API_URL="https://localhost:$CORRAL_PORT" E2B_API_KEY; E2B_API_KEY=$(member_key tun-a)
export CORRAL_OTHER_KEY; CORRAL_OTHER_KEY=$(member_key tun-b)

run_files() { [ $# -eq 0 ] || node --test --test-concurrency=1 --test-reporter=spec "$@"; }
rc=0
echo "--- the tunnel's own tests"
CORRAL_ROUTING=url E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" \
    run_files tests/tunnel/*.test.mjs || rc=1
# The e2b files about reaching a sandbox, through the tunnel (CORRAL_TUNNEL_E2B
# narrows them for a developer's run; "-": none).
read -r -a FILES <<< "${CORRAL_TUNNEL_E2B:-commands pty_files gateway_reuse}"
[ "${FILES[*]}" = - ] && FILES=()
FILES=("${FILES[@]/#/tests/e2b/}") && FILES=("${FILES[@]/%/.test.mjs}")
echo "--- e2b, routing by host: E2B_DOMAIN=corral.localhost:$CORRAL_PORT"
CORRAL_E2B_SDK=e2b CORRAL_ROUTING=domain E2B_DOMAIN="corral.localhost:$CORRAL_PORT" \
    CORRAL_SANDBOX_DOMAIN=corral.localhost run_files "${FILES[@]}" || rc=1
echo "--- e2b, routing by headers: E2B_SANDBOX_URL=https://localhost:$((CORRAL_PORT + 1))"
CORRAL_E2B_SDK=e2b CORRAL_ROUTING=url E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" \
    E2B_VOLUME_API_URL="$E2B_API_URL" run_files "${FILES[@]}" || rc=1
[ "$rc" = 0 ] || tail -n 40 "$CORRAL_RUN"/log/workerd.log "$CORRAL_RUN"/log/tunneld.log
conf/stack.sh down >/dev/null 2>&1
suite_sanitizer_reports "$CORRAL_RUN/log" || rc=1
[ "$rc" = 0 ] && rm -rf "$CORRAL_RUN"
exit "$rc"
