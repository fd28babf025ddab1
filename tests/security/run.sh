#!/usr/bin/env bash
# tests/security/run.sh: the attacker's matrix (issue 25) against the whole
# stack on one host (tests/security/env.sh): what every kind of sandbox can
# reach from inside, what another workspace's key, a join token and a
# worker's secret can do on the control plane, and where the gateway may
# connect. The real e2b SDK (tests/e2b's lock file), real dockerd and workerd;
# the agent-mode kind on a person's machine beside it (machine.sh).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
# shellcheck source=tests/security/env.sh
. tests/security/env.sh

bash tests/lib/e2b_modules.sh || { echo "npm ci failed"; exit 1; }
make -s all >/dev/null || { echo "build failed"; exit 1; }
down() { bash tests/security/machine.sh down >/dev/null 2>&1; conf/stack.sh down >/dev/null 2>&1; }
trap down EXIT
conf/stack.sh up >/dev/null || { echo "stack did not come up"; tail -n 20 "$CORRAL_RUN"/log/*.log; exit 1; }
bash tests/security/machine.sh up || { echo "the person's machine did not come up"; exit 1; }
# The egress proxies resolve the stand-ins' names; workerd must have enrolled.
for w in workerd workerd-2; do
    for _ in $(seq 1 300); do grep -q "enrolled as worker" "$CORRAL_RUN/log/$w.log" && break; sleep 0.1; done
done
node --test --test-concurrency=1 --test-reporter=spec tests/security/
rc=$?
[ "$rc" = 0 ] || tail -n 30 "$CORRAL_RUN"/log/workerd*.log "$CORRAL_RUN"/log/agent-*.log
down
[ "$rc" = 0 ] && rm -rf "$CORRAL_RUN" "$CORRAL_SEC_PC_HOMES"
exit "$rc"
