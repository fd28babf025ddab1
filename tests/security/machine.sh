#!/usr/bin/env bash
# tests/security/machine.sh up|down: the person's machine of the agent-mode
# rows (decision 0054), beside the stack of tests/security/env.sh.
#
# A network namespace, CORRAL_SEC_PC_NS, with a loopback of its own and a
# veth to this host (CORRAL_SEC_PC_ADDR there, CORRAL_SEC_PC_HOST here, a
# default route through it): what a person's machine on the platform's LAN
# has. It reaches the platform as such a machine does, by its public API
# and data plane only: relay.py puts those two ports (nginx listens on this
# host's loopback) on the machine's own 127.0.0.1, so that the agents' and
# their sandboxes' https://127.0.0.1:PORT is nginx, with its certificate. The
# gateway reaches the agents' data ports at CORRAL_SEC_PC_ADDR (listed by
# env.sh). The agents themselves are started by the tests (lib.mjs), which
# make the workspaces they join. Needs root (ip netns); env.sh sourced.
set -euo pipefail
: "${CORRAL_SEC_PC_NS:?source tests/security/env.sh first}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/netns.sh
. "$ROOT/tests/lib/netns.sh"
NS=$CORRAL_SEC_PC_NS
SUFFIX=$(printf '%s' "${CORRAL_RUN##*.}" | tr -cd 'A-Za-z0-9' | tail -c 8)
VETH_HOST=cs${SUFFIX}h VETH_PC=cs${SUFFIX}p
RELAY_PID=$CORRAL_RUN/sec-relay.pid

up() {
    ip netns list | grep -qw "^$NS" && { echo "machine.sh: $NS exists already" >&2; exit 1; }
    netns_sweep corral-sec-pc- "$NS" cs
    # The /30 must be nobody's: no address of this host and no route in it.
    if [ -n "$(ip -4 -o addr show to "$CORRAL_SEC_PC_HOST/30")" ] \
        || ip -4 route show match "$CORRAL_SEC_PC_ADDR" | grep -vq '^default'; then
        echo "machine.sh: $CORRAL_SEC_PC_HOST/30 is in use here: set CORRAL_SEC_PC_NET" >&2; exit 1
    fi
    netns_up "$NS" "$VETH_HOST" "$VETH_PC" "${CORRAL_SEC_PC_HOST%.1}"
    mkdir -p -m 755 "$CORRAL_SEC_PC_HOMES"
    setsid python3 "$ROOT/tests/lib/relay.py" "/run/netns/$NS" "$CORRAL_PORT" $((CORRAL_PORT + 1)) \
        >>"$CORRAL_RUN/log/sec-relay.log" 2>&1 </dev/null &
    echo $! > "$RELAY_PID"
    for _ in $(seq 1 100); do
        [ "$(ip netns exec "$NS" ss -ltnH "( sport = :$CORRAL_PORT or sport = :$((CORRAL_PORT + 1)) )" | wc -l)" = 2 ] \
            && return 0
        # sleep: between tries of this loop (100 of them).
        sleep 0.1
    done
    echo "machine.sh: the relay did not come up (see $CORRAL_RUN/log/sec-relay.log)" >&2
    exit 1
}

# Everything in the namespace is the tests' (agents, their sessions, the
# machine's services): ended by pid, then the relay, then the namespace and
# with it the veth pair.
down() {
    local pids
    if ip netns list | grep -qw "^$NS"; then
        pids=$(ip netns pids "$NS" | tr '\n' ' ')
        # shellcheck disable=SC2086
        [ -z "${pids// }" ] || kill -TERM $pids 2>/dev/null || true
        for _ in $(seq 1 50); do [ -z "$(ip netns pids "$NS")" ] && break; sleep 0.1; done
        pids=$(ip netns pids "$NS" | tr '\n' ' ')
        # shellcheck disable=SC2086
        [ -z "${pids// }" ] || kill -KILL $pids 2>/dev/null || true
    fi
    if [ -f "$RELAY_PID" ]; then kill "$(cat "$RELAY_PID")" 2>/dev/null || true; rm -f "$RELAY_PID"; fi
    ip netns del "$NS" 2>/dev/null || true
    ip link del "$VETH_HOST" 2>/dev/null || true
}

case "${1:-}" in
up) up ;;
down) down ;;
*) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
