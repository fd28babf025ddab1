#!/usr/bin/env bash
# tests/tunnel/natworker.sh up|down: a worker host behind NAT (issue 29),
# beside the stack tests/tunnel/run.sh brings up.
#
# The host is a network namespace, CORRAL_NAT_NS, with a veth to this host
# (CORRAL_NAT_NET.2 there, .1 here): its traffic out is masqueraded here,
# and a wall in the namespace drops every connection that starts outside it
# ("nothing in"). On it: a dockerd of its own (its bridges, containers and
# workerd's nft table are the namespace's) with corral/base loaded, and a
# workerd with `tunnel = on` and no data port. It reaches the control plane
# as a worker on the internet does, by nginx's public port only: relay.py
# puts that port on the namespace's 127.0.0.1 (nginx's certificate names
# it), and the tunnel rides that connection back. Processes enter only the
# network namespace (nsenter --net): `ip netns exec` would mount a /sys of
# its own, where dockerd finds no cgroups. Needs root.
set -euo pipefail
: "${CORRAL_RUN:?run through tests/tunnel/run.sh (CORRAL_RUN, CORRAL_PORT)}" "${CORRAL_PORT:?}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${CORRAL_BUILD:-$ROOT/build/bin}
# shellcheck source=tests/lib/netns.sh
. "$ROOT/tests/lib/netns.sh"
SUFFIX=$(printf '%s' "${CORRAL_RUN##*.}" | tr -cd 'A-Za-z0-9' | tail -c 8)
NS=${CORRAL_NAT_NS:-corral-nat-$SUFFIX}
NET=${CORRAL_NAT_NET:-10.235.77}
VETH_HOST=cn${SUFFIX}h VETH_NAT=cn${SUFFIX}n
TABLE=corral_nat_$SUFFIX
DIR=$CORRAL_RUN/nat
SOCK=$DIR/docker.sock
IN=(nsenter "--net=/run/netns/$NS")

die() { echo "natworker.sh: $*" >&2; exit 1; }

# What a run killed before its down made besides its namespace and veth.
sweep_nat_table() { nft delete table ip "corral_nat_$1" 2>/dev/null || true; }

wait_for() { # what, command...
    local what=$1
    shift
    for _ in $(seq 1 300); do
        "$@" >/dev/null 2>&1 && return 0
        # sleep: between tries of this loop (300 of them).
        sleep 0.1
    done
    die "$what did not come up"
}

network_up() {
    netns_up "$NS" "$VETH_HOST" "$VETH_NAT" "$NET"
    # Out: masqueraded here, as a home router or a cloud's NAT gateway does.
    nft -f - <<NFT
table ip $TABLE {
    chain post { type nat hook postrouting priority srcnat; ip saddr $NET.0/30 oifname != "$VETH_HOST" masquerade; }
}
NFT
    # In: nothing that starts outside reaches the host or its containers.
    "${IN[@]}" nft -f - <<NFT
table inet corral_nat_wall {
    chain input { type filter hook input priority -10; iifname "$VETH_NAT" ct state new drop; }
    chain forward { type filter hook forward priority -10; iifname "$VETH_NAT" ct state new drop; }
}
NFT
}

dockerd_up() {
    mkdir -p "$DIR/exec" "$DIR/data"
    echo '{"default-address-pools":[{"base":"10.204.0.0/16","size":28}]}' > "$DIR/daemon.json"
    "${IN[@]}" setsid dockerd --host "unix://$SOCK" --data-root "$DIR/data" --exec-root "$DIR/exec" \
        --pidfile "$DIR/dockerd.pid" --config-file "$DIR/daemon.json" --iptables=false --bip 172.19.0.1/16 \
        >>"$CORRAL_RUN/log/dockerd-nat.log" 2>&1 </dev/null &
    wait_for "the NAT host's dockerd (see $CORRAL_RUN/log/dockerd-nat.log)" \
        curl -sf --max-time 2 --unix-socket "$SOCK" http://d/_ping
    docker save corral/base:latest | docker -H "unix://$SOCK" load >/dev/null \
        || die "loading corral/base into the NAT host's dockerd failed"
}

workerd_up() {
    mkdir -p -m 700 "$DIR/state"
    (umask 077; "$BIN/corralctl" -c "$CORRAL_RUN/corral.conf" --json join-token create --ttl 86400 \
        | sed -E 's/.*"token":"([^"]*)".*/\1/' > "$DIR/workerd.token")
    cat > "$DIR/workerd.conf" <<CONF
tunnel = on
control_url = https://127.0.0.1:$CORRAL_PORT
ca_file = $CORRAL_RUN/tls/ca.crt
join_token_file = $DIR/workerd.token
state_dir = $DIR/state
docker_socket = $SOCK
template.base = corral/base
probe_image = corral/base
CONF
    "${IN[@]}" setsid "$BIN/workerd" -c "$DIR/workerd.conf" >>"$CORRAL_RUN/log/workerd-nat.log" 2>&1 </dev/null &
    echo $! > "$DIR/workerd.pid"
    for _ in $(seq 1 600); do
        grep -q "enrolled as worker" "$CORRAL_RUN/log/workerd-nat.log" 2>/dev/null && return 0
        kill -0 "$(cat "$DIR/workerd.pid")" 2>/dev/null || break
        # sleep: between tries of this loop (600 of them: workerd probes its runtimes first).
        sleep 0.1
    done
    die "the NAT host's workerd did not enrol (see $CORRAL_RUN/log/workerd-nat.log)"
}

up() {
    ip netns list | grep -qw "^$NS" && die "$NS exists already"
    netns_sweep corral-nat- "$NS" cn sweep_nat_table
    if [ -n "$(ip -4 -o addr show to "$NET.0/30")" ]; then die "$NET.0/30 is in use here: set CORRAL_NAT_NET"; fi
    mkdir -p "$DIR" "$CORRAL_RUN/log"
    network_up
    setsid python3 "$ROOT/tests/lib/relay.py" "/run/netns/$NS" "$CORRAL_PORT" \
        >>"$CORRAL_RUN/log/nat-relay.log" 2>&1 </dev/null &
    echo $! > "$DIR/relay.pid"
    wait_for "the relay" "${IN[@]}" bash -c "exec 3<>/dev/tcp/127.0.0.1/$CORRAL_PORT"
    dockerd_up
    workerd_up
    echo "natworker.sh: $NS up: dockerd on $SOCK, workerd pid $(cat "$DIR/workerd.pid")"
}

stop_pid() { # pid file
    local pid
    [ -f "$1" ] || return 0
    pid=$(cat "$1")
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        # sleep: between tries of this loop (100 of them).
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

# workerd, the containers, dockerd (its mounts with it), the relay; then
# whatever is left in the namespace, the namespace, the veth and the NAT.
down() {
    local pids
    stop_pid "$DIR/workerd.pid"
    if [ -S "$SOCK" ]; then
        docker -H "unix://$SOCK" ps -aq 2>/dev/null | xargs -r docker -H "unix://$SOCK" rm -f >/dev/null 2>&1 || true
    fi
    stop_pid "$DIR/dockerd.pid"
    stop_pid "$DIR/relay.pid"
    if ip netns list | grep -qw "^$NS"; then
        pids=$(ip netns pids "$NS" | tr '\n' ' ')
        # shellcheck disable=SC2086
        [ -z "${pids// }" ] || kill -KILL $pids 2>/dev/null || true
    fi
    findmnt -rn -o TARGET | grep "^$DIR/" | sort -r | xargs -r umount -l 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
    ip link del "$VETH_HOST" 2>/dev/null || true
    nft delete table ip "$TABLE" 2>/dev/null || true
}

case "${1:-}" in
up) up ;;
down) down ;;
env) echo "CORRAL_NAT_NS=$NS CORRAL_NAT_ADDR=$NET.2 CORRAL_NAT_DOCKER_SOCK=$SOCK CORRAL_NAT_DIR=$DIR" ;;
*) echo "usage: $0 up|down|env" >&2; exit 2 ;;
esac
