#!/usr/bin/env bash
# tests/tunnel/run.sh: a worker reached only through its tunnel (issue 29,
# decision 0087). A one-host stack with corral-tunneld and one workerd with
# `tunnel = on` (its data port a unix socket, no TCP port), the real e2b SDK
# over HTTPS: tests/tunnel/*.test.mjs (what the tunnel must refuse and how
# it fails and comes back), then the e2b suite's files about reaching a
# sandbox (commands, files, PTYs, watch, getHost) against the tunnelled
# worker's sandboxes, by host and by headers. Then the same files against a
# worker host behind NAT (natworker.sh: a network namespace with its own
# dockerd, nothing in), after behind_nat.check.mjs. Then, on a stack of two
# gateway hosts, hosts.check.mjs: the tunnel held on either, moved when its
# host dies.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
# shellcheck source=tests/lib/suite.sh
. tests/lib/suite.sh

export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-tunnel.XXXXXX)
export CORRAL_PORT=${CORRAL_TUNNEL_TEST_PORT:-19043} CORRAL_REDIS_PORT=${CORRAL_TUNNEL_TEST_REDIS_PORT:-16990}
export CORRAL_PROFILE=test CORRAL_BUILD=${CORRAL_BUILD:-$ROOT/build/bin} CORRAL_WORKERD=1 CORRAL_TUNNEL=1 CORRAL_GATEWAY_HOSTS=0
export CORRAL_WORKERD_DATA_PORT=${CORRAL_TUNNEL_TEST_WORKERD_PORT:-17931} CORRAL_FLEET_SHARE=100
export NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt" CORRAL_URL="https://localhost:$CORRAL_PORT"
export ASAN_OPTIONS="detect_leaks=1:log_path=$CORRAL_RUN/log/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$CORRAL_RUN/log/ubsan"

bash tests/lib/e2b_modules.sh || { echo "npm ci failed"; exit 1; }
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
# The e2b files about reaching a sandbox (commands, files, PTY, watch,
# getHost, tokens), through the tunnel, in both routing modes
# (CORRAL_TUNNEL_E2B narrows them for a developer's run; "-": none).
read -r -a FILES <<< "${CORRAL_TUNNEL_E2B:-commands pty_files gateway_reuse host_security}"
[ "${FILES[*]}" = - ] && FILES=()
FILES=("${FILES[@]/#/tests/e2b/}") && FILES=("${FILES[@]/%/.test.mjs}")
e2b_files() { # what they run against
    echo "--- e2b against $1, routing by host: E2B_DOMAIN=corral.localhost:$CORRAL_PORT"
    CORRAL_E2B_SDK=e2b CORRAL_ROUTING=domain E2B_DOMAIN="corral.localhost:$CORRAL_PORT" \
        CORRAL_SANDBOX_DOMAIN=corral.localhost run_files "${FILES[@]}" || rc=1
    echo "--- e2b against $1, routing by headers: E2B_SANDBOX_URL=https://localhost:$((CORRAL_PORT + 1))"
    CORRAL_E2B_SDK=e2b CORRAL_ROUTING=url E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" \
        E2B_VOLUME_API_URL="$E2B_API_URL" run_files "${FILES[@]}" || rc=1
}
e2b_files "the stack's tunnelled workerd"

# A worker host behind NAT (natworker.sh): the stack's own workerd stopped
# and judged dead first, so that every create lands there.
echo "--- a worker behind NAT: tests/tunnel/natworker.sh"
kill -TERM "$(cat "$CORRAL_RUN/pids/workerd.pid")" 2>/dev/null
alive_workers() { ctl workers | python3 -c 'import json,sys; print(sum(w["state"] == "alive" for w in json.load(sys.stdin)))'; }
for _ in $(seq 1 100); do
    [ "$(alive_workers)" = 0 ] && break
    # sleep: between tries of this loop (100 of them: the test profile's lease is 5 s).
    sleep 0.2
done
trap 'bash tests/tunnel/natworker.sh down >/dev/null 2>&1; conf/stack.sh down >/dev/null 2>&1; suite_dockerd_release' EXIT
if [ "$(alive_workers)" != 0 ]; then
    echo "the stack's workerd is still alive after it was stopped"; rc=1
elif ! bash tests/tunnel/natworker.sh up; then
    echo "the worker behind NAT did not come up"; tail -n 20 "$CORRAL_RUN"/log/*nat*.log; rc=1
else
    eval "export $(bash tests/tunnel/natworker.sh env)"
    CORRAL_ROUTING=url E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" \
        run_files tests/tunnel/behind_nat.check.mjs || rc=1
    e2b_files "the worker behind NAT"
    [ "$rc" = 0 ] || tail -n 40 "$CORRAL_RUN"/log/workerd-nat.log
fi
bash tests/tunnel/natworker.sh down
[ "$rc" = 0 ] || tail -n 40 "$CORRAL_RUN"/log/workerd.log "$CORRAL_RUN"/log/tunneld.log
conf/stack.sh down >/dev/null 2>&1

# Two gateway hosts (conf/gateway-hosts.sh), a stack of their own on a
# network of their own (the e2b suite's hosts may run beside this one): the
# tunnel held on either host, and moved when its host dies.
echo "--- two gateway hosts: tests/tunnel/hosts.check.mjs"
HOSTS_RUN=$(mktemp -d /tmp/corral-tunhosts.XXXXXX)
trap 'CORRAL_RUN=$HOSTS_RUN conf/stack.sh down >/dev/null 2>&1; suite_dockerd_release' EXIT
(
    export CORRAL_RUN=$HOSTS_RUN CORRAL_GATEWAY_HOSTS=2 CORRAL_HOSTS_NET=${CORRAL_TUNNEL_HOSTS_NET:-10.237.0}
    export NODE_EXTRA_CA_CERTS="$HOSTS_RUN/tls/ca.crt"
    mkdir -p "$CORRAL_RUN/log"
    conf/stack.sh up >/dev/null || { echo "the stack of two gateway hosts did not come up"; tail -n 20 "$CORRAL_RUN"/log/*.log; exit 1; }
    E2B_API_KEY=$(member_key tun-hosts)
    CORRAL_ROUTING=url E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" \
        run_files tests/tunnel/hosts.check.mjs \
        || { tail -n 30 "$CORRAL_RUN"/log/workerd.log "$CORRAL_RUN"/log/gw*-tunneld.log; exit 1; }
) || rc=1
CORRAL_RUN=$HOSTS_RUN conf/stack.sh down >/dev/null 2>&1
[ "$rc" = 0 ] && rm -rf "$HOSTS_RUN"
suite_sanitizer_reports "$CORRAL_RUN/log" || rc=1
[ "$rc" = 0 ] && rm -rf "$CORRAL_RUN"
exit "$rc"
