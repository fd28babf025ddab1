#!/usr/bin/env bash
# tests/failover/workerd.sh: a Sentinel failover slower than a worker's lease,
# under load, with a real workerd on the real dockerd (issue 34 point 1,
# decision 0070). The control plane with Redis under Sentinel (a primary, a
# replica, three sentinels: CORRAL_REDIS_HA=1, decision 0058) whose sentinels
# wait 20 s before they call the primary down (CORRAL_SENTINEL_DOWN_AFTER_MS),
# twice the lease (10 s, as tests/workerd/run.sh); workerd.check.mjs pauses
# the primary (SIGSTOP: it holds its connections and answers nothing) and
# checks what tests/workerd/outage.mjs says. dockerd as tests/workerd/run.sh
# finds or starts it; the control plane and workerd from CORRAL_BUILD.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-failover-wd.XXXXXX)
export CORRAL_PORT=${CORRAL_FAILOVER_WD_PORT:-18343} CORRAL_REDIS_PORT=${CORRAL_FAILOVER_WD_REDIS_PORT:-16290}
export CORRAL_PROFILE=test CORRAL_REDIS_HA=1 CORRAL_BUILD=${CORRAL_BUILD:-$ROOT/build/bin}
export CORRAL_LEASE_MS=${CORRAL_LEASE_MS:-10000} CORRAL_CREATE_TIMEOUT_MS=${CORRAL_CREATE_TIMEOUT_MS:-60000}
export CORRAL_SENTINEL_DOWN_AFTER_MS=${CORRAL_SENTINEL_DOWN_AFTER_MS:-$((CORRAL_LEASE_MS * 2))}
export CORRAL_URL="https://localhost:$CORRAL_PORT" NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt"
export WORKERD_BIN=${WORKERD_BIN:-$CORRAL_BUILD/workerd}
export ASAN_OPTIONS="detect_leaks=1:log_path=$CORRAL_RUN/log/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$CORRAL_RUN/log/ubsan"
# shellcheck source=tests/lib/ports.sh
. tests/lib/ports.sh
listed_data_ports 2 127.0.0.1 || { echo "no free ports for data ports"; exit 1; }

# shellcheck source=tests/lib/suite.sh
. tests/lib/suite.sh
suite_stack_up || exit 1
node --test --test-reporter=spec tests/failover/workerd.check.mjs
rc=$?
conf/stack.sh down >/dev/null 2>&1
suite_sanitizer_reports "$CORRAL_RUN/log" || rc=1
[ "$rc" -eq 0 ] && rm -rf "$CORRAL_RUN"
exit "$rc"
