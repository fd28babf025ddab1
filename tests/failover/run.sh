#!/usr/bin/env bash
# tests/failover/run.sh: the control plane with Redis under Sentinel (a
# primary, a replica, three sentinels: CORRAL_REDIS_HA=1, decision 0058),
# two corral-api and two corral-sched on the sanitized build, and the primary
# killed mid-load by failover.test.mjs. No docker: the worker is a TestWorker
# speaking the real worker routes.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
# shellcheck source=tests/lib/suite.sh
. tests/lib/suite.sh
export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-failover.XXXXXX)
export CORRAL_PORT=${CORRAL_FAILOVER_PORT:-18243} CORRAL_REDIS_PORT=${CORRAL_FAILOVER_REDIS_PORT:-16190}
export CORRAL_PROFILE=test CORRAL_REDIS_HA=1 CORRAL_BUILD=${CORRAL_BUILD:-$ROOT/build-san/bin}
# failover.test.mjs keeps a few hundred sandboxes of one workspace: above the
# test profile's ceiling_max_concurrent_sandboxes (100, decision 0063).
export CORRAL_CEILING_MAX_CONCURRENT=500
export CORRAL_URL="https://localhost:$CORRAL_PORT" NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt"
export ASAN_OPTIONS="detect_leaks=1:log_path=$CORRAL_RUN/log/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$CORRAL_RUN/log/ubsan"
trap 'conf/stack.sh down >/dev/null 2>&1' EXIT
conf/stack.sh up >/dev/null || { echo "failover: the stack did not come up"; tail -n 20 "$CORRAL_RUN"/log/*.log; exit 1; }
node --test --test-concurrency=1 --test-reporter=spec tests/failover/
rc=$?
conf/stack.sh down >/dev/null 2>&1
suite_sanitizer_reports "$CORRAL_RUN/log" || rc=1
[ "$rc" -eq 0 ] && rm -rf "$CORRAL_RUN"
exit "$rc"
