#!/usr/bin/env bash
# tests/lib/e2b_modules.sh: tests/e2b's node_modules (the e2b SDKs the suites
# drive) installed by `npm ci` from the committed lock file, once per lock.
# Suites run side by side (decision 0083) and each needs them: a second
# `npm ci` would delete node_modules under a suite that is running. So one
# install at a time (flock), and none when the installed tree is this lock's
# (its sha256 kept in node_modules).
set -euo pipefail
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../e2b" && pwd)
STAMP=$DIR/node_modules/.corral-lock.sha256
want=$(sha256sum "$DIR/package-lock.json" | cut -d' ' -f1)
exec 9>"$DIR/.modules.lock"
flock 9
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then exit 0; fi
# A CA bundle of a stack that is gone would fail npm's own TLS.
(cd "$DIR" && env -u NODE_EXTRA_CA_CERTS npm ci --no-audit --no-fund --loglevel=error)
echo "$want" > "$STAMP"
