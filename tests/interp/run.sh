#!/usr/bin/env bash
# tests/interp/run.sh: corral-interp (issue 30, decision 0088) on this host,
# as a code-interpreter sandbox will run it: Debian's python3 with
# ipykernel, the server on a loopback port, driven over HTTP as
# @e2b/code-interpreter drives it (server.test.mjs), and the chart extractor
# against Debian's matplotlib (charts_test.py). The real package against the
# real template is tests/e2b/interp*.test.mjs.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
PORT=${CORRAL_INTERP_TEST_PORT:-49911}
BIN=${CORRAL_BUILD:-$ROOT/build/bin}
bash tests/lib/deps.sh || { echo "dependencies (python3-ipykernel) cannot be installed"; exit 1; }
make -s "$BIN/corral-interp" >/dev/null 2>&1 || make -s all >/dev/null || { echo "build failed"; exit 1; }
/usr/bin/python3 tests/interp/charts_test.py 2>&1 | tail -4
[ "${PIPESTATUS[0]}" = 0 ] || { echo "the chart extractor's tests failed"; exit 1; }
WORK=$(mktemp -d /tmp/corral-interp-test.XXXXXX)
# Debian's python3, whatever else is first on PATH (a pyenv's has no ipykernel).
PATH=/usr/bin:/bin CORRAL_INTERP_TEST_ENV=from-the-server \
    ASAN_OPTIONS="detect_leaks=0:log_path=$WORK/asan" UBSAN_OPTIONS="print_stacktrace=1:log_path=$WORK/ubsan" \
    setsid "$BIN/corral-interp" -addr 127.0.0.1 -port "$PORT" -cwd "$WORK" -dir "$WORK" \
    -kernels "$ROOT/interp/kernels" >"$WORK/interp.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    grep -q "serving on" "$WORK/interp.log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { echo "corral-interp exited:"; cat "$WORK/interp.log"; exit 1; }
    # sleep: between tries of this loop (300 of them: the python kernel starts first)
    sleep 0.1
done
grep -q "serving on" "$WORK/interp.log" || { echo "corral-interp did not serve in 30 s"; tail "$WORK/interp.log"; exit 1; }
stop() { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
trap stop EXIT
CORRAL_INTERP_URL="http://127.0.0.1:$PORT" CORRAL_INTERP_WORK="$WORK" CORRAL_INTERP_PID="$pid" \
    CORRAL_INTERP_BIN="$BIN/corral-interp" CORRAL_INTERP_KERNELS="$ROOT/interp/kernels" \
    node --test --test-reporter=spec tests/interp/
rc=$?
stop
trap - EXIT
[ "$rc" = 0 ] || tail -n 30 "$WORK/interp.log"
# A kernel left behind by the server's stop would be a leak of processes.
if pgrep -f -- "-f $WORK/kernel-" >/dev/null; then echo "kernels outlived the server"; rc=1; fi
if ls "$WORK"/asan* "$WORK"/ubsan* >/dev/null 2>&1; then echo "sanitizer reports:"; cat "$WORK"/asan* "$WORK"/ubsan* | head -60; rc=1; fi
[ "$rc" = 0 ] && rm -rf "$WORK"
exit "$rc"
