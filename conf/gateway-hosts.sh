# shellcheck shell=bash
# conf/gateway-hosts.sh: several gateway hosts on this one machine (issue 16,
# decision 0059), sourced by stack.sh when CORRAL_GATEWAY_HOSTS=N (N >= 1).
#
# Each host is a network namespace of its own (corral-<PORT>-gw<i>) joined to
# a bridge (cgw<PORT>, <NET>.1/24) by a veth pair, at <NET>.<10+i>. It runs
# what an operator's gateway host runs: nginx with the module, two
# corral-api and corral-tunneld, sharing nothing with the other hosts but Redis. Redis, its
# replica and sentinels, corral-sched and the workers stay in the root
# namespace and listen on <NET>.1 as well. In front, in the root namespace,
# nginx's `stream` module balances plain TCP (TLS passes through) over the
# hosts on PORT and DATA_PORT: the stack's nginx.conf is the balancer's.
# Needs: RUN PORT DATA_PORT DOMAIN and stack.sh's functions.

HOSTS_NET=${CORRAL_HOSTS_NET:-10.233.0}

hosts_count() { # what `up` recorded, else the setting
    cat "$RUN/gateway-hosts" 2>/dev/null || echo "${CORRAL_GATEWAY_HOSTS:-0}"
}
hosts_bridge() { echo "cgw$PORT"; }
host_ns() { echo "corral-$PORT-gw$1"; }
host_addr() { echo "$HOSTS_NET.$((10 + $1))"; }
host_dir() { echo "$RUN/gw-$1"; }
host_tunnel_ports() { echo "$(host_addr "$1"):$TUNNEL_RANGE"; }

# The bridge and one namespace per host; a left-over one is made afresh.
hosts_net_up() {
    local n=$1 br i ns
    br=$(hosts_bridge)
    hosts_net_down "$n"
    ip link add "$br" type bridge || die "cannot make bridge $br (root and iproute2 needed)"
    ip addr add "$HOSTS_NET.1/24" dev "$br"
    ip link set "$br" up
    for i in $(seq 1 "$n"); do
        ns=$(host_ns "$i")
        ip netns add "$ns"
        ip link add "$br-$i" type veth peer name "h$PORT-$i"
        ip link set "$br-$i" master "$br" up
        ip link set "h$PORT-$i" netns "$ns"
        ip -n "$ns" link set "h$PORT-$i" name eth0
        ip -n "$ns" addr add "$(host_addr "$i")/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
    done
}

hosts_net_down() {
    local n=$1 i
    for i in $(seq 1 "$n"); do ip netns del "$(host_ns "$i")" 2>/dev/null || true; done
    ip link del "$(hosts_bridge)" 2>/dev/null || true
}

# Host i's nginx: the same templates as the one-host stack, its own state dir
# (sockets, pid, logs), listening on every address of its namespace.
host_conf() {
    local i=$1 dir
    dir=$(host_dir "$i")
    mkdir -p "$dir"/{log,nginx}
    ln -sfn "$RUN/tls" "$dir/tls"
    render_nginx "$dir" "" "$PORT" "$DATA_PORT"
}

host_start() {
    local i=$1 dir ns n
    dir=$(host_dir "$i") ns=$(host_ns "$i")
    host_conf "$i"
    for n in $(seq 1 "$API_PROCS"); do
        start_bg "gw$i-api-$n" ip netns exec "$ns" "$BIN/corral-api" -c "$RUN/corral.conf" -l "$dir/api-$n.sock"
    done
    for n in $(seq 1 "$API_PROCS"); do wait_for "host $i's corral-api $n" test -S "$dir/api-$n.sock"; done
    # Its corral-tunneld: workers' tunnels that arrive here, held on this
    # host's own address (decision 0087).
    rm -f "$dir/tunneld.sock"
    start_bg "gw$i-tunneld" ip netns exec "$ns" "$BIN/corral-tunneld" -c "$RUN/corral.conf" \
        -l "$dir/tunneld.sock" -p "$(host_tunnel_ports "$i")"
    wait_for "host $i's corral-tunneld" test -S "$dir/tunneld.sock"
    start_nginx "gw$i-nginx" "$dir" "$ns"
    wait_for "gateway host $i at $(host_addr "$i"):$PORT" curl -sf --max-time 2 --cacert "$RUN/tls/ca.crt" \
        --resolve "localhost:$PORT:$(host_addr "$i")" "https://localhost:$PORT/health"
}

# Host i dies at once: every process in its namespace gets SIGKILL, as when
# its machine loses power. The namespace stays, so host_start brings it back.
# Their supervisors (in the root namespace: decision 0072) die first, so that
# nothing brings the host back by itself.
host_kill() {
    local pids f
    for f in "$RUN/supervise/gw$1-"*.pid; do
        if [ -f "$f" ]; then kill -KILL "$(cat "$f")" 2>/dev/null || true; fi
        rm -f "$f"
    done
    pids=$(ip netns pids "$(host_ns "$1")")
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -KILL $pids
    for _ in $(seq 1 50); do [ -z "$(ip netns pids "$(host_ns "$1")")" ] && break; sleep 0.1; done
    rm -f "$(host_dir "$1")/nginx.pid" "$RUN/pids/gw$1-api-"*.pid "$RUN/pids/gw$1-tunneld.pid"
}

hosts_pid_files() { # what stack_state expects of a host stack
    local i n
    for i in $(seq 1 "$(hosts_count)"); do
        echo "$(host_dir "$i")/nginx.pid"
        for n in $(seq 1 "$API_PROCS"); do echo "$RUN/pids/gw$i-api-$n.pid"; done
        echo "$RUN/pids/gw$i-tunneld.pid"
    done
}

# The balancer: plain TCP, the next host on a refused or timed-out connect.
balancer_conf() {
    local n=$1 i api="" data=""
    for i in $(seq 1 "$n"); do
        api+="        server $(host_addr "$i"):$PORT max_fails=1 fail_timeout=5s;"$'\n'
        data+="        server $(host_addr "$i"):$DATA_PORT max_fails=1 fail_timeout=5s;"$'\n'
    done
    sed -e "s|@RUN@|$RUN|g" -e "s|@PORT@|$PORT|g" -e "s|@DATA_PORT@|$DATA_PORT|g" \
        -e "s|@USER@|$(id -un)|g" "$ROOT/conf/balancer.conf.in" \
        | awk -v api="$api" -v data="$data" '
            $0 == "@API_HOSTS@" { printf "%s", api; next }
            $0 == "@DATA_HOSTS@" { printf "%s", data; next }
            { print }' > "$RUN/nginx.conf"
}

# The balancer sends to the first N hosts only (the bench's 1, 2, 3), by a
# reload: connections already open finish on the old set.
balance() {
    local n=$1 gen
    [ "$n" -ge 1 ] && [ "$n" -le "$(hosts_count)" ] 2>/dev/null || die "balance: 1 to $(hosts_count) hosts"
    balancer_conf "$n"
    gen=$(pgrep -P "$(cat "$RUN/nginx.pid")" | sort | tr '\n' ' ')
    nginx -p "$RUN" -c "$RUN/nginx.conf" -e "$RUN/log/nginx-error.log" -s reload
    # reloaded once the old worker has given way to a new one
    for _ in $(seq 1 100); do
        [ "$(pgrep -P "$(cat "$RUN/nginx.pid")" | sort | tr '\n' ' ')" != "$gen" ] && return 0
        sleep 0.1
    done
    die "balance: nginx did not reload"
}

hosts_up() {
    local n=$1 i
    for i in $(seq 1 "$n"); do host_start "$i"; done
}

hosts_down() {
    local n i
    n=$(hosts_count)
    [ "$n" -ge 1 ] 2>/dev/null || return 0
    for i in $(seq 1 "$n"); do
        [ -e "/run/netns/$(host_ns "$i")" ] && host_kill "$i"
    done
    hosts_net_down "$n"
    rm -f "$RUN/gateway-hosts"
}
