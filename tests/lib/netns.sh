# shellcheck shell=bash
# tests/lib/netns.sh: a "host" of a test's own, a network namespace joined
# to this one by a veth pair on a /30 (this end .1, its end .2), its default
# route through this host: the person's machine of tests/security/machine.sh,
# the worker host behind NAT of tests/tunnel/natworker.sh. Sourced; root.

# netns_up NS VETH_HERE VETH_THERE NET ("10.234.77": NET.1 here, NET.2 there)
netns_up() {
    local ns=$1 here=$2 there=$3 net=$4
    ip netns add "$ns"
    ip link add "$here" type veth peer name "$there" netns "$ns"
    ip addr add "$net.1/30" dev "$here"
    ip link set "$here" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$net.2/30" dev "$there"
    ip -n "$ns" link set "$there" up
    ip -n "$ns" route add default via "$net.1"
}

# netns_sweep PREFIX MINE VETH_PREFIX [CLEANUP]: the namespaces PREFIX<suffix>
# an earlier run left (a killed run, a reboot of the test's environment)
# with nothing running in them, removed with their veth
# (VETH_PREFIX<suffix>h) and, when given, CLEANUP <suffix> for what else it
# made. One with processes is someone's: left alone, as MINE is.
netns_sweep() {
    local prefix=$1 mine=$2 veth=$3 cleanup=${4:-} ns suffix
    for ns in $(ip netns list | awk -v p="^$prefix" '$1 ~ p {print $1}'); do
        [ "$ns" != "$mine" ] && [ -z "$(ip netns pids "$ns")" ] || continue
        suffix=${ns#"$prefix"}
        echo "netns: removing $ns, left by an earlier run" >&2
        ip netns del "$ns" 2>/dev/null || true
        ip link del "$veth${suffix}h" 2>/dev/null || true
        [ -z "$cleanup" ] || "$cleanup" "$suffix"
    done
}
