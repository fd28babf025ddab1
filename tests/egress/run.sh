#!/usr/bin/env bash
# Builds corral-egress and runs its end-to-end tests (Node's built-in test
# runner against the real binary, on loopback only: stand-in hosts on
# 127.0.0.x, reached through -test-host). Exits non-zero on any failure; a
# missing tool is a failure, never a skip. BUILD=dir builds into another
# tree (default build/); EGRESS_BIN=path tests a binary built elsewhere.
set -euo pipefail
cd "$(dirname "$0")/../.."

for tool in node curl openssl; do
    command -v "$tool" >/dev/null || { echo "egress tests: $tool is missing" >&2; exit 1; }
done
if [ -z "${EGRESS_BIN:-}" ]; then
    build="${BUILD:-build}"
    make -s -j1 BUILD="$build" "$build/bin/corral-egress"
    EGRESS_BIN="$PWD/$build/bin/corral-egress"
fi
export EGRESS_BIN
node --test --test-concurrency=1 --test-reporter=spec tests/egress/*.test.mjs
