# tests/security/env.sh: the stack the matrix runs against (sourced by run.sh;
# source it by hand to bring the same stack up for a look: conf/stack.sh up,
# then bash tests/security/machine.sh up for the agent-mode machine).
# One host as most operators run it: Redis with a replica and three sentinels,
# two corral-api behind nginx, two workerd on one dockerd (runc and runsc),
# the second reached only through its tunnel (corral-tunneld).
# Beside it, a person's machine (tests/security/machine.sh): a network
# namespace of its own, reached by a veth like a neighbour on the LAN, where
# the tests start one agent-mode workerd per workspace, each as a user of its
# own (not root), as decision 0054 runs one: a's offers its data port, b's
# dials out through a tunnel.
export CORRAL_RUN=${CORRAL_RUN:-$(mktemp -d /tmp/corral-sec.XXXXXX)}
export CORRAL_PORT=${CORRAL_SEC_PORT:-19443} CORRAL_REDIS_PORT=${CORRAL_SEC_REDIS_PORT:-17390}
export CORRAL_PROFILE=test CORRAL_BUILD=${CORRAL_BUILD:-$ROOT/build/bin} CORRAL_WORKERD=2
export CORRAL_REDIS_HA=1 CORRAL_WORKERD_DATA_PORT=${CORRAL_SEC_WORKERD_PORT:-17951}
export CORRAL_FLEET_SHARE=100 CORRAL_CREATE_TIMEOUT_MS=60000
# A worker's lease: the matrix does not measure how soon a dead worker is
# noticed, and on a loaded host (a shared CI machine, 2 cores) the test
# profile's 5 s let a worker busy with a snapshot be judged dead mid-matrix,
# losing the fork made from it ("worker dead ... snapshots stay on the worker
# that made them").
export CORRAL_LEASE_MS=${CORRAL_SEC_LEASE_MS:-30000}
# Warm sandboxes of a template of their own (decision 0082): the warm kind
# claims one; every other kind is made cold as before.
export CORRAL_WORKERD_EXTRA="template.warm = corral/base
warm_pool = warm=2"
# The second workerd reached only through its tunnel (decision 0087): it
# listens on no TCP port; the tunnelled kind is made there by the template
# only it offers (any other kind may land there too).
export CORRAL_TUNNEL_WORKERS=2 CORRAL_WORKERD_EXTRA_2="template.tunnelled = corral/base"
export NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt"
export E2B_API_URL="https://localhost:$CORRAL_PORT"
export E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))"
# The person's machine: its netns, its /30 (.1 this host's end, .2 its own),
# the data ports of its two agents (listed exactly for the gateway, decision
# 0061), the users they run as (no passwd entry needed: envd -agent takes
# HOME and the uid), and the directory of their homes (world-traversable:
# CORRAL_RUN is 0700, and these users are not root).
CORRAL_SEC_PC_NET=${CORRAL_SEC_PC_NET:-10.234.77}
export CORRAL_SEC_PC_NS=${CORRAL_SEC_PC_NS:-corral-sec-pc-${CORRAL_RUN##*.}}
export CORRAL_SEC_PC_HOST=$CORRAL_SEC_PC_NET.1 CORRAL_SEC_PC_ADDR=$CORRAL_SEC_PC_NET.2
export CORRAL_SEC_PC_DATA_PORTS=${CORRAL_SEC_PC_DATA_PORTS:-7001 7002}
export CORRAL_SEC_PC_UIDS=${CORRAL_SEC_PC_UIDS:-64101 64102}
export CORRAL_SEC_PC_HOMES=${CORRAL_SEC_PC_HOMES:-$CORRAL_RUN-pc}
# Which of the machine's agents (0: a's, 1: b's) dials out through a tunnel
# instead of offering its data port: b's, so the matrix holds one of each.
export CORRAL_SEC_PC_TUNNEL_SLOTS=${CORRAL_SEC_PC_TUNNEL_SLOTS-1}
CORRAL_WORKER_ADDRS_EXTRA=""
for p in $CORRAL_SEC_PC_DATA_PORTS; do CORRAL_WORKER_ADDRS_EXTRA+=" $CORRAL_SEC_PC_ADDR:$p"; done
export CORRAL_WORKER_ADDRS_EXTRA=${CORRAL_WORKER_ADDRS_EXTRA# }
