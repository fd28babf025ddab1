#!/usr/bin/env bash
# Builds envd (make build/bin/envd) and runs its integration tests
# (Node's built-in test runner against the real binary). Exits non-zero on
# any failure; a missing tool is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/../.."

need_pkgs=()
for hdr in /usr/include/jansson.h /usr/include/openssl/evp.h /usr/include/zlib.h; do
    [ -e "$hdr" ] || need_pkgs+=("$(case $hdr in *jansson*) echo libjansson-dev;; *openssl*) echo libssl-dev;; *) echo zlib1g-dev;; esac)")
done
command -v node >/dev/null || need_pkgs+=(nodejs)
command -v cc >/dev/null || need_pkgs+=(build-essential)
# the permission gate's tests: a terminal to answer on, and bubblewrap
command -v tmux >/dev/null || need_pkgs+=(tmux)
command -v bwrap >/dev/null || need_pkgs+=(bubblewrap)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    echo "envd tests: installing ${need_pkgs[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}"
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
    echo "envd tests: need Node >= 20, have $(node --version)" >&2
    exit 1
fi
if [ "$(id -u)" != 0 ]; then
    echo "envd tests: must run as root (envd switches users)" >&2
    exit 1
fi

make -s -j2 build/bin/envd
export ENVD_BIN="$PWD/build/bin/envd"
"$ENVD_BIN" -version

# One file at a time: the 100 MB test and the timing tests want the machine's 2 cores.
node --test --test-concurrency=1 tests/envd/*.test.mjs
