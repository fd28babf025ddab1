# tests/lib/ports.sh (sourced): loopback ports no one holds, so that test
# stacks never collide with another stack on the same machine.
#
# Picked below the kernel's ephemeral range (ip_local_port_range), never from
# it: a port the kernel hands out there (listen on port 0, then close) can be
# given to an outgoing connection before our server binds it, and then nginx
# fails with "Address already in use". Ports below 20000 are left to the
# suites' fixed ports.
PORTS_LOW=20000

# 1 when nothing listens on or is connected from port $1.
port_unused() {
    [ -z "$(ss -tanH "( sport = :$1 )")" ]
}

# free_port: one unused port in [20000, start of the ephemeral range).
free_port() {
    local top p
    read -r top _ </proc/sys/net/ipv4/ip_local_port_range
    for _ in $(seq 50); do
        p=$((PORTS_LOW + (RANDOM * 32768 + RANDOM) % (top - PORTS_LOW - 1)))
        port_unused "$p" && { echo "$p"; return 0; }
    done
    echo "ports.sh: no free port after 50 tries" >&2
    return 1
}

# free_ports N: N distinct unused ports on one line; the first, p, has p+1
# unused too and taken by none of the others (a stack's API and data ports).
free_ports() {
    local n=$1 got=() p
    for _ in $(seq $((n * 20))); do
        [ ${#got[@]} -ge "$n" ] && break
        p=$(free_port) || return 1
        case " ${got[*]} $((${got[0]:-0} + 1)) " in *" $p "*) continue ;; esac
        if [ ${#got[@]} -eq 0 ]; then
            port_unused $((p + 1)) || continue
        fi
        got+=("$p")
    done
    [ ${#got[@]} -ge "$n" ] || { echo "ports.sh: no $n free ports" >&2; return 1; }
    echo "${got[*]}"
}

# listed_data_ports N HOST: N unused ports for test workers' data ports on
# HOST, which the gateway connects to only when listed exactly (decision
# 0061). Exports CORRAL_TEST_DATA_PORTS (the ports, for tests/lib/data_ports.mjs)
# and CORRAL_WORKER_ADDRS_EXTRA (HOST:port each, which conf/stack.sh lists).
listed_data_ports() {
    local ports p addrs=""
    ports=$(free_ports "$1") || return 1
    for p in $ports; do addrs+=" $2:$p"; done
    export CORRAL_TEST_DATA_PORTS="$ports" CORRAL_WORKER_ADDRS_EXTRA="${addrs# }"
}
