#!/usr/bin/env bash
# tests/e2b/run.sh: the real e2b npm SDK (pinned in package-lock.json) against
# the whole stack scaled out (issue 16, decision 0059) — three gateway hosts,
# each a network namespace with nginx, ngx_http_corral_module and two
# corral-api, behind a TCP balancer; Redis with a replica and three sentinels;
# corral-sched; two real workerd on a real dockerd, envd in every sandbox —
# over HTTPS: the pinned SDK (2.51.0) by host (E2B_DOMAIN), and by headers
# (E2B_SANDBOX_URL) for the files about reaching a sandbox; the older 2.45.0
# (tests/e2b/sdk.mjs) by host, for the files about what it does differently
# (its routes, create defaults and key checks; see below).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1

export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-e2b.XXXXXX)
export CORRAL_PORT=${CORRAL_E2B_PORT:-18843} CORRAL_REDIS_PORT=${CORRAL_E2B_REDIS_PORT:-16790}
export CORRAL_PROFILE=test CORRAL_BUILD=${CORRAL_BUILD:-$ROOT/build/bin} CORRAL_WORKERD=2
export CORRAL_GATEWAY_HOSTS=3 CORRAL_REDIS_HA=1 CORRAL_HOSTS_NET=${CORRAL_E2B_HOSTS_NET:-10.233.0}
# workerd with its own capacity defaults, as `make up` starts it (cpu_overcommit,
# slots from memory), and no fleet share, as the dev profile: thirty_idle.check.mjs.
export CORRAL_WORKERD_DATA_PORT=${CORRAL_E2B_WORKERD_PORT:-17901} CORRAL_FLEET_SHARE=100
# The operator's maximum life below a refresh's 3600 s, so that
# lifecycle.test.mjs sees a refresh cut to it (no test asks for more than 300 s).
export CORRAL_SANDBOX_MAX_TIMEOUT_S=1800
export NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt"
# The agent-mode tests' workerd data ports, on the hosts' bridge (where the
# gateway hosts reach this machine), listed exactly for the gateway (0061).
# shellcheck source=tests/lib/ports.sh
. tests/lib/ports.sh
listed_data_ports 8 "$CORRAL_HOSTS_NET.1" || { echo "no free ports for data ports"; exit 1; }
# The egress proxies resolve the stand-in hosts' names (tests/lib/standins.mjs).
# One code-interpreter-v1 sandbox is kept warm beside base's two, for
# interp.test.mjs's claim.
# The HTTPS stand-ins' certificates (egress_rules.test.mjs): the proxies check
# real servers against egress_roots, the machine's roots and the test's CA.
node -e "import('./tests/lib/test_pki.mjs').then((m) => m.makeTestPki('$CORRAL_RUN/pki'))" ||
    { echo "test certificates: openssl failed"; exit 1; }
export CORRAL_WORKERD_EXTRA; CORRAL_WORKERD_EXTRA="$(node -e \
    "import('./tests/lib/standins.mjs').then((m) => console.log(m.egressHostsConf()))")
egress_roots = $CORRAL_RUN/pki/roots.pem
warm_pool = base=2 code-interpreter-v1=1"

bash tests/lib/e2b_modules.sh || { echo "npm ci failed"; exit 1; }
make -s all >/dev/null || { echo "build failed"; exit 1; }
# dockerd outlives the stack's `down`, which would stop a dockerd the stack
# started (decision 0072): the check after `down` below asks it what is left.
# Stopped at the end only if this script started it.
# shellcheck source=tests/lib/suite.sh
. tests/lib/suite.sh
suite_dockerd_note
trap 'conf/stack.sh down >/dev/null 2>&1; suite_dockerd_release' EXIT
bash tests/lib/docker.sh start || { echo "dockerd: cannot start"; exit 1; }
conf/stack.sh up >/dev/null || { echo "stack did not come up"; tail -n 20 "$CORRAL_RUN"/log/*.log; exit 1; }

export E2B_API_URL="https://localhost:$CORRAL_PORT" E2B_API_KEY; E2B_API_KEY=$(member_key e2b-a)
export CORRAL_OTHER_KEY; CORRAL_OTHER_KEY=$(member_key e2b-b)
# e2b-a's owner, for thirty_idle.check.mjs (it raises the workspace's limit).
export CORRAL_OWNER_KEY; CORRAL_OWNER_KEY=$(field owner_key < "$CORRAL_RUN/ws-e2b-a.json")

# Every file with the pinned SDK by host. By headers (E2B_SANDBOX_URL), the
# files about how the SDK reaches a sandbox: commands, files and PTYs, the
# gateway, tenancy on the data plane. The control plane's lifecycle,
# snapshots, volumes, metrics, the agent mode and egress policies (network:
# what a sandbox reaches, not how the SDK reaches it) do not depend on it.
# The older SDK, by host, runs the files about what it does differently:
# creates by POST /sandboxes with its own defaults (secure, internet access
# on), connects by /sandboxes/{id}/connect, checks key formats itself (no
# E2B_VALIDATE_API_KEY). Its envd client and its body builders for network,
# lifecycle and volumes are the pinned one's (the same feature gates and
# code), so its data-plane and egress runs repeated the pinned SDK's.
BY_HEADERS=(commands pty_files sandbox gateway_reuse host_security round3 pause_memory volumes interp)
OLD_SDK=(sandbox round2 lifecycle snapshots volumes host_security commands pause_memory templates)
ALL=(tests/e2b/)
# CORRAL_E2B_ONLY="a b": only tests/e2b/a.test.mjs and b.test.mjs, in each of
# the runs above that has them, and not the two checks below (a developer's
# run of the files at hand; CI runs everything).
only() { local n o; for n in "$@"; do for o in $CORRAL_E2B_ONLY; do [ "$n" = "$o" ] && echo "$n"; done; done; }
if [ -n "${CORRAL_E2B_ONLY:-}" ]; then
    mapfile -t ALL < <(only $(cd tests/e2b && ls *.test.mjs | sed 's/\.test\.mjs$//'))
    mapfile -t BY_HEADERS < <(only "${BY_HEADERS[@]}")
    mapfile -t OLD_SDK < <(only "${OLD_SDK[@]}")
    ALL=("${ALL[@]/#/tests/e2b/}") && ALL=("${ALL[@]/%/.test.mjs}")
fi
BY_HEADERS=("${BY_HEADERS[@]/#/tests/e2b/}") && BY_HEADERS=("${BY_HEADERS[@]/%/.test.mjs}")
OLD_SDK=("${OLD_SDK[@]/#/tests/e2b/}") && OLD_SDK=("${OLD_SDK[@]/%/.test.mjs}")
# node --test with no file runs every test it finds: an empty list runs nothing.
run_files() { [ $# -eq 0 ] || node --test --test-concurrency=1 --test-reporter=spec "$@"; }
rc=0
for sdk in e2b e2b-old; do
    files=("${ALL[@]}")
    [ "$sdk" = e2b-old ] && files=("${OLD_SDK[@]}")
    echo "--- $sdk, routing by host: E2B_DOMAIN=corral.localhost:$CORRAL_PORT"
    CORRAL_E2B_SDK=$sdk CORRAL_ROUTING=domain E2B_DOMAIN="corral.localhost:$CORRAL_PORT" \
        CORRAL_SANDBOX_DOMAIN=corral.localhost run_files "${files[@]}" || rc=1
    [ "$sdk" = e2b ] || continue
    echo "--- $sdk, routing by headers: E2B_SANDBOX_URL=https://localhost:$((CORRAL_PORT + 1))"
    # Without E2B_DOMAIN the SDK finds the volume file API at E2B_VOLUME_API_URL
    # (api.<the domain a volume's create answers> does not resolve here), as
    # `make up` exports it.
    CORRAL_E2B_SDK=$sdk CORRAL_ROUTING=url E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" \
        E2B_VOLUME_API_URL="$E2B_API_URL" run_files "${BY_HEADERS[@]}" || rc=1
done
if [ -z "${CORRAL_E2B_ONLY:-}" ]; then
    # Once: the development stack's capacity (issue 9), with workerd's defaults.
    echo "--- thirty idle sandboxes at once"
    CORRAL_ROUTING=url E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" \
        node --test --test-reporter=spec tests/e2b/thirty_idle.check.mjs || rc=1
    # Once: the scale-out checks (they kill a gateway host and the Redis primary).
    echo "--- scale-out: three gateway hosts, Redis failover"
    CORRAL_ROUTING=url E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" \
        node --test --test-reporter=spec tests/e2b/scaleout.check.mjs || rc=1
fi
[ "$rc" = 0 ] || tail -n 30 "$CORRAL_RUN"/log/workerd*.log
wids=$(sed -n 's/^worker_id = //p' "$CORRAL_RUN"/workerd*-state/worker)
conf/stack.sh down >/dev/null 2>&1
# `make down` ends the stack: none of its sandboxes, ready proxies or networks stay.
for wid in ${wids:?no worker id in the state dirs}; do
    left=$(docker ps -aq --filter "label=corral.worker=$wid" | wc -l)
    nets=$(docker network ls -q --filter "label=corral.worker=$wid" | wc -l)
    echo "--- after down: $left containers, $nets networks of worker $wid"
    [ "$left" = 0 ] && [ "$nets" = 0 ] || { echo "e2b: stack.sh down left containers or networks behind"; rc=1; }
done
ip netns list | grep -q "corral-$CORRAL_PORT-gw" && { echo "e2b: stack.sh down left gateway hosts behind"; rc=1; }
[ "$rc" = 0 ] && rm -rf "$CORRAL_RUN"
exit "$rc"
