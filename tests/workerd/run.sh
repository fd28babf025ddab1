#!/usr/bin/env bash
# tests/workerd/run.sh: workerd's tests against a real dockerd (and, for
# stack.test.mjs, the real control plane brought up by conf/stack.sh).
# Starts dockerd if it is not running (and stops it at the end only then),
# builds corral/base if missing, runs every *.test.mjs, exits non-zero on any
# failure. A test that cannot reach dockerd fails; none is skipped.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1

export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-wtest.XXXXXX)
export CORRAL_PORT=${CORRAL_TEST_PORT:-18643} CORRAL_REDIS_PORT=${CORRAL_TEST_REDIS_PORT:-16590}
export CORRAL_PROFILE=test CORRAL_BUILD=${CORRAL_BUILD:-$ROOT/build/bin}
export CORRAL_URL="https://localhost:$CORRAL_PORT" NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt"
export WORKERD_BIN=${WORKERD_BIN:-$CORRAL_BUILD/workerd}
# Restart tests kill workerd and start it again within its lease: under ASan on
# a loaded 2-core machine that restart (runtime probes included) can take 4 s,
# too close to the test profile's 5 s. Lease expiry is still tested, later.
export CORRAL_LEASE_MS=${CORRAL_LEASE_MS:-10000}
# A template's ready command that never succeeds fails its create after this
# (templates.test.mjs), not the create wait's 55 s (decision 0080).
export CORRAL_TEMPLATE_READY_S=${CORRAL_TEMPLATE_READY_S:-12}
# The operator's template ceilings, small enough to meet (registry_gc.test.mjs).
export CORRAL_TEMPLATE_STORAGE_MB=${CORRAL_TEMPLATE_STORAGE_MB:-8} CORRAL_MAX_BUILDS=${CORRAL_MAX_BUILDS:-2}
# A create waits up to 60 s for running, as in production (the test profile
# says 20): a dozen creates at once took this 2-core machine's dockerd 25 s
# under ASan, and what these tests claim is what lands, not dockerd's speed.
export CORRAL_CREATE_TIMEOUT_MS=${CORRAL_CREATE_TIMEOUT_MS:-60000}
# The tests' workerd data ports, listed exactly for the gateway (decision 0061).
# shellcheck source=tests/lib/ports.sh
. tests/lib/ports.sh
listed_data_ports 12 127.0.0.1 || { echo "no free ports for data ports"; exit 1; }

# shellcheck source=tests/lib/suite.sh
. tests/lib/suite.sh
make -s all >/dev/null || { echo "build failed"; make all; exit 1; }
suite_stack_up || exit 1

# CORRAL_WORKERD_ONLY="a b": only tests/workerd/a.test.mjs and b.test.mjs.
# CORRAL_WORKERD_EXCEPT="a b": every file but those (tests/run.sh runs them
# in a lane of their own, on other ports: decision 0083).
files=(tests/workerd/)
[ -n "${CORRAL_WORKERD_ONLY:-}" ] && read -ra files <<<"${CORRAL_WORKERD_ONLY}" &&
    files=("${files[@]/#/tests/workerd/}") && files=("${files[@]/%/.test.mjs}")
if [ -n "${CORRAL_WORKERD_EXCEPT:-}" ]; then
    files=()
    for f in tests/workerd/*.test.mjs; do
        case " $CORRAL_WORKERD_EXCEPT " in *" $(basename "$f" .test.mjs) "*) ;; *) files+=("$f") ;; esac
    done
fi
node --test --test-concurrency=1 --test-reporter=spec "${files[@]}"
rc=$?
conf/stack.sh down >/dev/null 2>&1
[ "$rc" -eq 0 ] && rm -rf "$CORRAL_RUN"
exit "$rc"
