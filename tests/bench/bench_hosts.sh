#!/usr/bin/env bash
# tests/bench/bench_hosts.sh (make bench, last section; BENCH_ONLY=hosts alone):
# issue 16's figures on a stack of its own — three gateway hosts (network
# namespaces, nginx and two corral-api each) behind the TCP balancer, Redis
# with a replica and three sentinels (decision 0059).
# 1. An authenticated control-plane GET (GET /v1/workspace: key check, rate
#    limit, one Redis read) through the balancer to 1, 2 and 3 hosts, with the
#    CPU each host, Redis and the balancer used per second of the run. This
#    machine has 2 cores, so more hosts cannot add req/s here; what the CPU
#    shows is that the hosts share the work and only Redis is common to all.
# 2. Failover: the Redis primary killed (-9) five times in a row, each time
#    the seconds until the API answers 200 again; the killed one is restarted
#    and rejoins as a replica before the next kill.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-hosts.XXXXXX)
export CORRAL_PORT=${CORRAL_BENCH_HOSTS_PORT:-19643} CORRAL_REDIS_PORT=${CORRAL_BENCH_HOSTS_REDIS_PORT:-19690}
export CORRAL_PROFILE=bench CORRAL_BUILD="$ROOT/build/bin" CORRAL_GATEWAY_HOSTS=3 CORRAL_REDIS_HA=1
export CORRAL_HOSTS_NET=${CORRAL_BENCH_HOSTS_NET:-10.234.0}
DURATION=${BENCH_SECONDS:-10}
CA="$CORRAL_RUN/tls/ca.crt"
trap 'conf/stack.sh down >/dev/null 2>&1; rm -rf "$CORRAL_RUN"' EXIT
conf/stack.sh up >/dev/null

ctl() { "$CORRAL_BUILD/corralctl" -c "$CORRAL_RUN/corral.conf" --json "$@"; }
ws=$(ctl workspace create bench-hosts | sed -E 's/.*"workspace":"([^"]*)".*/\1/')
key=$(ctl key create --workspace "$ws" --role member | sed -E 's/.*"key":"([^"]*)".*/\1/')
URL="https://localhost:$CORRAL_PORT/v1/workspace"

# shellcheck source=tests/bench/wrk.sh
. tests/bench/wrk.sh
host_pids() { ip netns pids "corral-$CORRAL_PORT-gw$1" | tr '\n' ' '; }
redis_pids() { cat "$CORRAL_RUN/pids/redis.pid" "$CORRAL_RUN/pids/redis-replica.pid" 2>/dev/null | tr '\n' ' '; }
balancer_pids() { echo "$(cat "$CORRAL_RUN/nginx.pid") $(pgrep -P "$(cat "$CORRAL_RUN/nginx.pid")" | tr '\n' ' ')"; }
# shellcheck disable=SC2046 # lists of pids
cpu_all() {
    echo "$(tests/bench/cpu_ticks.sh $(host_pids 1)) $(tests/bench/cpu_ticks.sh $(host_pids 2))" \
        "$(tests/bench/cpu_ticks.sh $(host_pids 3)) $(tests/bench/cpu_ticks.sh $(redis_pids))" \
        "$(tests/bench/cpu_ticks.sh $(balancer_pids))"
}

echo
echo "GET /v1/workspace through the TCP balancer to N gateway hosts (nginx + corral-api x2 each), wrk 64 connections, ${DURATION}s:"
echo "  (CPU: seconds used per second of the run; $(nproc) cores in all)"
for n in 1 2 3; do
    conf/stack.sh balance "$n" >/dev/null
    read -r -a c0 <<<"$(cpu_all)"
    read -r rps p99 bad <<<"$(wrk_run -H "X-API-Key: $key" "$URL" | parse)"
    read -r -a c1 <<<"$(cpu_all)"
    awk -v n="$n" -v r="$rps" -v p="$p99" -v b="$bad" -v d="$DURATION" -v hz="$(getconf CLK_TCK)" \
        -v h1=$((c1[0] - c0[0])) -v h2=$((c1[1] - c0[1])) -v h3=$((c1[2] - c0[2])) -v rd=$((c1[3] - c0[3])) -v lb=$((c1[4] - c0[4])) \
        'BEGIN { s = hz * d; printf "  %d host%s %8.0f req/s   p99 %7.2f ms   (non-2xx: %s)   CPU: hosts %.2f %.2f %.2f, Redis %.2f, balancer %.2f\n", n, (n > 1 ? "s" : " "), r, p, b, h1/s, h2/s, h3/s, rd/s, lb/s }'
done

# The port of the primary the sentinels name now.
primary_port() {
    REDISCLI_AUTH=$(cat "$CORRAL_RUN/redis-sentinel-password") redis-cli --no-auth-warning \
        -p $((CORRAL_REDIS_PORT + 2)) SENTINEL get-master-addr-by-name corral | tail -1
}
role_of() {
    REDISCLI_AUTH=$(cat "$CORRAL_RUN/redis-admin-password") redis-cli --no-auth-warning --user corral-admin \
        -p "$1" ROLE 2>/dev/null | sed -n '1p;4p' | tr '\n' ' '
}
status() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 --cacert "$CA" -H "X-API-Key: $key" "$URL"; }

echo
echo "Redis failover: the primary killed with -9, seconds until GET /v1/workspace answers 200 again (5 in a row):"
times=()
for i in 1 2 3 4 5; do
    port=$(primary_port)
    if [ "$port" = "$CORRAL_REDIS_PORT" ]; then name=redis; else name=redis-replica; fi
    [ "$(status)" = 200 ] || { echo "bench: the API does not answer before failover $i"; exit 1; }
    kill -KILL "$(cat "$CORRAL_RUN/pids/$name.pid")"
    t0=$(date +%s%N)
    for _ in $(seq 1 600); do [ "$(status)" = 200 ] && break; sleep 0.05; done # bounded: 600 tries
    t1=$(date +%s%N)
    [ "$(status)" = 200 ] || { echo "bench: no service 30 s after failover $i"; exit 1; }
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", (b - a) / 1e9}')")
    # The killed one comes back and follows the new primary before the next kill.
    conf/stack.sh "start-$name" >/dev/null
    for _ in $(seq 1 300); do [ "$(role_of "$port")" = "slave connected " ] && break; sleep 0.1; done
    [ "$(role_of "$port")" = "slave connected " ] || { echo "bench: port $port did not rejoin as a replica"; exit 1; }
done
printf '  %s s\n' "${times[*]}"
printf '%s\n' "${times[@]}" | sort -n | awk '{v[NR]=$1} END {printf "  p50 %.2f s (sentinels: down-after 1 s, quorum 2 of 3)\n", v[int((NR+1)/2)]}'
