#!/usr/bin/env bash
# tests/soak/run.sh: leaks and descriptor exhaustion under load, with the real
# e2b SDK against the whole stack (conf/stack.sh with a workerd on the real
# dockerd, as tests/e2b/run.sh brings it up, on ports of its own).
#   fd_exhaustion.test.mjs  a workerd out of fds says so and gets no creates
#   soak.test.mjs           fds and RSS of workerd, corral-api, nginx, dockerd
#                           and envd stay flat over a stretch of sandbox churn
# (node --test runs the files in that order, by name.) Everything the tests
# make is removed on every path: by the tests, and here at exit by worker id.
# Run it on the build without sanitizers (the default here, and what
# tests/run.sh passes): ASan inflates RSS.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-soak.XXXXXX)
export CORRAL_PORT=${CORRAL_SOAK_PORT:-18943} CORRAL_REDIS_PORT=${CORRAL_SOAK_REDIS_PORT:-16890}
export CORRAL_PROFILE=test CORRAL_WORKERD=1
# All 6 slots to the one workspace: the test profile's fleet_share (50%) would cap it at 3.
export CORRAL_FLEET_SHARE=100
# Slots: the 4 churn loops, the long-lived sandbox and one to spare; a kill
# that lags behind creates shows as more containers than that (issue 34).
export CORRAL_WORKERD_DATA_PORT=${CORRAL_SOAK_WORKERD_PORT:-17941} CORRAL_WORKERD_SLOTS=6
export CORRAL_URL="https://localhost:$CORRAL_PORT" NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt"
# The fd test's second workerd: its data port listed exactly for the gateway (0061).
# shellcheck source=tests/lib/ports.sh
. tests/lib/ports.sh
listed_data_ports 4 127.0.0.1 || { echo "no free ports for data ports"; exit 1; }
SRC_BIN=${CORRAL_BUILD:-$ROOT/build/bin}
SRC_MODULE=${CORRAL_NGINX_MODULE:-$ROOT/build/nginx-module/ngx_http_corral_module.so}

bash tests/lib/e2b_modules.sh || { echo "npm ci failed"; exit 1; }
make -s all >/dev/null || { echo "build failed"; exit 1; }
# The stack runs private copies of the binaries and of the nginx module: a
# rebuild of build/ during the run (another run's `make`) would otherwise
# rewrite the module nginx has mapped (its workers then die of SIGSEGV) and
# mix two builds in one measurement. envd and corral-egress go along: workerd
# finds them next to itself.
mkdir -p "$CORRAL_RUN/bin"
cp -a "$SRC_BIN"/. "$CORRAL_RUN/bin/" || { echo "cannot copy $SRC_BIN"; exit 1; }
cp "$SRC_MODULE" "$CORRAL_RUN/ngx_http_corral_module.so" || { echo "nginx module missing"; exit 1; }
export CORRAL_BUILD="$CORRAL_RUN/bin" CORRAL_NGINX_MODULE="$CORRAL_RUN/ngx_http_corral_module.so"
export ENVD_BIN="$CORRAL_RUN/bin/envd"  # for the fd test's second workerd (tests/workerd/helpers.mjs)

worker_ids() {
    { grep -hoE 'enrolled as (new )?worker [0-9a-f]+' "$CORRAL_RUN/log/workerd.log" 2>/dev/null | awk '{print $NF}'
      cat "$CORRAL_RUN/extra-workers" 2>/dev/null; } | sort -u
}
# dockerd outlives the stack's `down` (the last-resort clean-up below needs it);
# stopped at the end only if this script started it.
# shellcheck source=tests/lib/suite.sh
. tests/lib/suite.sh
suite_dockerd_note
cleanup() {
    local pid
    # A second workerd the fd test started, should the test have died first.
    for pid in $(cat "$CORRAL_RUN/extra-workerd.pids" 2>/dev/null); do
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = workerd ] && kill -KILL "$pid" 2>/dev/null
    done
    conf/stack.sh down >/dev/null 2>&1
    # The tests kill every sandbox they make; what a failed run left goes here.
    local ids; ids=$(worker_ids)
    [ -n "$ids" ] && node tests/soak/cleanup.mjs $ids
    suite_dockerd_release
    true
}
trap cleanup EXIT
bash tests/lib/docker.sh start || { echo "dockerd: cannot start"; exit 1; }
conf/stack.sh up >/dev/null || { echo "stack did not come up"; tail -n 20 "$CORRAL_RUN"/log/*.log; exit 1; }

ctl() { "$CORRAL_BUILD/corralctl" -c "$CORRAL_RUN/corral.conf" --json "$@"; }
ws=$(ctl workspace create soak | sed -E 's/.*"workspace":"([^"]*)".*/\1/')
export E2B_API_KEY; E2B_API_KEY=$(ctl key create --workspace "$ws" --role member | sed -E 's/.*"key":"([^"]*)".*/\1/')
export E2B_API_URL="$CORRAL_URL" E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" CORRAL_ROUTING=url

node --test --test-concurrency=1 --test-reporter=spec tests/soak/fd_exhaustion.test.mjs tests/soak/soak.test.mjs
rc=$?
if [ "$rc" != 0 ]; then
    echo "--- workerd.log (tail)"; tail -n 20 "$CORRAL_RUN/log/workerd.log"
    echo "--- nginx-error.log (tail)"; tail -n 10 "$CORRAL_RUN/log/nginx-error.log"
    echo "(state and logs kept in $CORRAL_RUN)"
fi
cleanup
trap - EXIT
[ "$rc" = 0 ] && rm -rf "$CORRAL_RUN"
exit "$rc"
