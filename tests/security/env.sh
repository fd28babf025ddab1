# tests/security/env.sh: the stack the matrix runs against (sourced by run.sh;
# source it by hand to bring the same stack up for a look: conf/stack.sh up).
# One host as most operators run it: Redis with a replica and three sentinels,
# two corral-api behind nginx, two workerd on one dockerd (runc and runsc).
export CORRAL_RUN=${CORRAL_RUN:-$(mktemp -d /tmp/corral-sec.XXXXXX)}
export CORRAL_PORT=${CORRAL_SEC_PORT:-19443} CORRAL_REDIS_PORT=${CORRAL_SEC_REDIS_PORT:-17390}
export CORRAL_PROFILE=test CORRAL_BUILD=${CORRAL_BUILD:-$ROOT/build/bin} CORRAL_WORKERD=2
export CORRAL_REDIS_HA=1 CORRAL_WORKERD_DATA_PORT=${CORRAL_SEC_WORKERD_PORT:-17951}
export CORRAL_FLEET_SHARE=100 CORRAL_CREATE_TIMEOUT_MS=60000
export NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt"
export E2B_API_URL="https://localhost:$CORRAL_PORT"
export E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))"
