#!/usr/bin/env bash
# tests/bench/bench_tunnel.sh (make bench; BENCH_ONLY=tunnel alone): issue
# 29's figures on a stack of its own — two workerd on this dockerd, the first
# reached at its data port, the second only through its tunnel (decision
# 0087) — through the real SDK over HTTPS: commands.run("true") round trips
# and 100 MB written and read back, on a sandbox of each worker in one run,
# the direct one the baseline; then corral-tunneld's and each workerd's
# memory, and corral-tunneld's holding 100 simulated worker tunnels with
# 1,000 open streams (bench_tunnel_hold.mjs), and workerd's with 1,000.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
# shellcheck source=tests/lib/suite.sh
. tests/lib/suite.sh
export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-btun.XXXXXX)
export CORRAL_PORT=${CORRAL_BENCH_TUNNEL_PORT:-19743} CORRAL_REDIS_PORT=${CORRAL_BENCH_TUNNEL_REDIS_PORT:-19790}
export CORRAL_PROFILE=bench CORRAL_BUILD="$ROOT/build/bin" CORRAL_WORKERD=2 CORRAL_TUNNEL_WORKERS=2
export CORRAL_WORKERD_DATA_PORT=${CORRAL_BENCH_TUNNEL_DATA_PORT:-19811}
# Room for 100 tunnels and more, clear of the stack's other ports.
export CORRAL_TUNNEL_PORTS=${CORRAL_BENCH_TUNNEL_PORTS:-127.0.0.1:20100-20299}
export NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt" CORRAL_URL="https://localhost:$CORRAL_PORT"
bash tests/lib/e2b_modules.sh >/dev/null
mkdir -p "$CORRAL_RUN/log"
suite_stack_up || exit 1
trap 'conf/stack.sh down >/dev/null 2>&1; suite_dockerd_release; rm -rf "$CORRAL_RUN"' EXIT
json=$(ctl workspace create bench-tunnel)
export E2B_API_URL="$CORRAL_URL" E2B_API_KEY; E2B_API_KEY=$(field owner_key <<<"$json")
E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" CORRAL_ROUTING=url \
    node tests/bench/bench_tunnel.mjs
node tests/bench/bench_tunnel_hold.mjs
