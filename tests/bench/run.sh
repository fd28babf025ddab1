#!/usr/bin/env bash
# tests/bench/run.sh (make bench): throughput and latency of the control plane,
# each figure beside a baseline measured in the same run on the same machine.
#   BENCH_ONLY=dataplane  only the data plane (sections 3 and 4, a few minutes):
#                         no API, sandbox-lifecycle, network or placement sections
#   BENCH_ONLY=lifecycle  only sections 2 and 2a: workerd's creates, then pause,
#                         resume, snapshots and deadlines (issue 11)
#   BENCH_ONLY=sustained  only the sustained churn of bench_sustained.mjs (issue
#                         34's soak: BENCH_SUSTAINED_PARALLEL loops for
#                         BENCH_SUSTAINED_SECONDS, 3 and 600 by default)
#   BENCH_ONLY=warm       only warm against cold creates (bench_warm.mjs, issue 35)
#   BENCH_ONLY=hosts      only section 6 (tests/bench/bench_hosts.sh): several
#                         gateway hosts, Redis failovers (decision 0059)
#   BENCH_ONLY=interp     only the code interpreter (bench_interp.mjs, issue 30):
#                         create to first runCode, runCode against commands.run
#   BENCH_ONLY=egress     only HTTPS through an egress proxy: intercepted with a
#                         rule, through its plain tunnel, and direct (issue 31,
#                         bench_egress_tls.mjs, on loopback)
#   BENCH_ONLY=tunnel     only section 7 (tests/bench/bench_tunnel.sh): a worker
#                         through its tunnel against the direct data port (0087)
#   BENCH_WORKERD_EXTRA   lines added to the bench workerd's config (for a baseline:
#                         "fast_remove = 1", decision 0086)
#   CORRAL_BENCH_PORT, CORRAL_BENCH_REDIS_PORT, CORRAL_BENCH_DATA_PORT  the ports
#                         (nginx uses PORT..PORT+2), so that benches can run side by side
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-bench.XXXXXX)
export CORRAL_PORT=${CORRAL_BENCH_PORT:-19543} CORRAL_REDIS_PORT=${CORRAL_BENCH_REDIS_PORT:-19490} CORRAL_PROFILE=bench CORRAL_BUILD="$ROOT/build/bin"
export CORRAL_WORKERD_DATA_PORT=${CORRAL_BENCH_DATA_PORT:-19801}
ONLY=${BENCH_ONLY:-all}
case "$ONLY" in all | dataplane | lifecycle | sustained | templates | warm | interp | egress) ;; hosts) rmdir "$CORRAL_RUN"; exec bash tests/bench/bench_hosts.sh ;;
tunnel) rmdir "$CORRAL_RUN"; exec bash tests/bench/bench_tunnel.sh ;;
*) echo "bench: BENCH_ONLY must be all, dataplane, lifecycle, sustained, templates, warm, interp, egress, hosts or tunnel" >&2; exit 2 ;; esac
# HTTPS through the egress proxy (issue 31): loopback only, no stack needed.
if [ "$ONLY" = egress ] || [ "$ONLY" = all ]; then
    make -s build/bin/corral-egress >/dev/null
    EGRESS_BIN="$ROOT/build/bin/corral-egress" node tests/bench/bench_egress_tls.mjs
    [ "$ONLY" = egress ] && { rmdir "$CORRAL_RUN"; exit 0; }
fi
export CORRAL_URL="https://localhost:$CORRAL_PORT" NODE_EXTRA_CA_CERTS="$CORRAL_RUN/tls/ca.crt"
DURATION=${BENCH_SECONDS:-10}
make -s build/bin/bench_sched >/dev/null
# A data port for bench_warm.mjs's workerd, listed for the gateway (0061).
# shellcheck source=tests/lib/ports.sh
. tests/lib/ports.sh
listed_data_ports 1 127.0.0.1 || { echo "bench: no free port for a data port"; exit 1; }
holder=
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; conf/stack.sh down; rm -rf "$CORRAL_RUN"' EXIT
conf/stack.sh up

ctl() { "$CORRAL_BUILD/corralctl" -c "$CORRAL_RUN/corral.conf" --json "$@"; }
field() { sed -E "s/.*\"$1\":\"([^\"]*)\".*/\1/"; }
ws_json=$(ctl workspace create bench); ws=$(field workspace <<<"$ws_json"); key=$(field owner_key <<<"$ws_json")
ctl key create --workspace "$ws" --role member >/dev/null
conf/stack.sh redis-cli HSET "corral:{ws:$ws}:info" max_concurrent 100000 >/dev/null

# shellcheck source=tests/bench/wrk.sh
. tests/bench/wrk.sh

# 0. Warm against cold creates (issue 35), before the fleet's workerd starts:
# bench_warm.mjs's own workerd is then the only one its workspace can use.
if [ "$ONLY" = warm ] || [ "$ONLY" = all ]; then
    bash tests/lib/e2b_modules.sh >/dev/null
    conf/stack.sh start-dockerd # the stack's (down stops it), for the bench's own workerd
    bash tests/lib/docker.sh ensure-image # corral/base, built once and kept
    env E2B_API_URL="$CORRAL_URL" E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))" \
        CORRAL_ROUTING=url node tests/bench/bench_warm.mjs
    [ "$ONLY" = warm ] && exit 0
    echo
fi

# 1. Authenticated GET /v1/sandboxes/{id} vs nginx serving a small static file.
if [ "$ONLY" = all ]; then
fifo="$CORRAL_RUN/holder.out"
node tests/bench/one_sandbox.mjs "$ws" "$key" > "$fifo" & holder=$!
for _ in $(seq 1 100); do [ -s "$fifo" ] && break; sleep 0.1; done
sbid=$(head -1 "$fifo")
[ -n "$sbid" ] || { echo "bench: could not create a sandbox"; exit 1; }
static=$(wrk_run "$CORRAL_URL/static.json" | parse)
api=$(wrk_run -H "X-API-Key: $key" "$CORRAL_URL/v1/sandboxes/$sbid" | parse)
read -r s_rps s_p99 _ <<<"$static"; read -r a_rps a_p99 a_bad <<<"$api"
echo
echo "GET /v1/sandboxes/{id} (nginx -> corral-api x2 -> Redis), wrk 64 connections, ${DURATION}s:"
printf '  corral-api   %10.0f req/s   p99 %7.2f ms   (non-2xx: %s)\n' "$a_rps" "$a_p99" "$a_bad"
printf '  static file  %10.0f req/s   p99 %7.2f ms\n' "$s_rps" "$s_p99"
awk -v a="$a_rps" -v s="$s_rps" 'BEGIN {printf "  ratio corral/static: %.2f   (goal: >= 5000 req/s, p99 < 10 ms)\n", a/s}'
for i in 1 2; do
    pid=$(cat "$CORRAL_RUN/pids/api-$i.pid")
    printf '  corral-api %d peak RSS: %s (goal: < 30 MB)\n' "$i" "$(awk '/VmHWM/ {printf "%.1f MB", $2/1024}' /proc/$pid/status)"
done
fi

# 2. Sandboxes on a real workerd and dockerd: create-to-running and RSS.
# Room for the 300 sandboxes of bench_network.mjs; its proxies resolve the stand-ins.
CORRAL_WORKERD_EXTRA="$(node -e "import('./tests/lib/standins.mjs').then((m) => console.log(m.egressHostsConf()))")
cpu_cores = 64
memory_mb = 65536
egress_pool = ${BENCH_POOL:-16}
${BENCH_WORKERD_EXTRA:-}" CORRAL_WORKERD_SLOTS=400 conf/stack.sh start-workerd
echo
# A second workspace: its creates can only go to the fleet, i.e. this workerd.
ws2_json=$(ctl workspace create bench-docker); ws2=$(field workspace <<<"$ws2_json")
conf/stack.sh redis-cli HSET "corral:{ws:$ws2}:info" max_concurrent 100000 >/dev/null
key2=$(field owner_key <<<"$ws2_json")
sdk_env=(E2B_API_URL="$CORRAL_URL" E2B_API_KEY="$key2" E2B_SANDBOX_URL="https://localhost:$((CORRAL_PORT + 1))")
if [ "$ONLY" = templates ] || [ "$ONLY" = all ]; then
    bash tests/lib/e2b_modules.sh >/dev/null
    env "${sdk_env[@]}" CORRAL_ROUTING=url node tests/bench/bench_templates.mjs
    [ "$ONLY" = templates ] && exit 0
    echo
fi
if [ "$ONLY" = interp ] || [ "$ONLY" = all ]; then
    bash tests/lib/e2b_modules.sh >/dev/null
    env "${sdk_env[@]}" CORRAL_ROUTING=url node tests/bench/bench_interp.mjs
    [ "$ONLY" = interp ] && exit 0
    echo
fi
if [ "$ONLY" = sustained ]; then
    bash tests/lib/e2b_modules.sh >/dev/null
    env "${sdk_env[@]}" CORRAL_ROUTING=url node tests/bench/bench_sustained.mjs
    exit 0
fi
if [ "$ONLY" != dataplane ]; then
node tests/bench/bench_workerd.mjs "$(field owner_key <<<"$ws2_json")" "$(cat "$CORRAL_RUN/pids/workerd.pid")"

# 2a. Pause and resume against dockerd's own, and deadline precision (issue 11).
# Right after bench_workerd's deletes: a pause must not wait behind them (0060).
echo
node tests/bench/bench_lifecycle.mjs "$(field owner_key <<<"$ws2_json")"
[ "$ONLY" = lifecycle ] && exit 0

# 2b. Network isolation: creates with and without a policy, downloads through the
# egress proxy, 300 sandboxes on this host.
echo
node tests/bench/bench_network.mjs "$(field owner_key <<<"$ws2_json")"
fi

# 3. The data plane with the real e2b SDK: through the gateway vs straight to
# envd (commands.run, 100 MB both ways with the SDK and curl), then 1,000 idle
# streams held through the gateway to 20 sandboxes.
bash tests/lib/e2b_modules.sh >/dev/null
echo
env "${sdk_env[@]}" node tests/e2b/bench_dataplane.mjs
echo
env "${sdk_env[@]}" node tests/bench/bench_idle_streams.mjs
if [ "$ONLY" = all ]; then
    echo; env "${sdk_env[@]}" CORRAL_ROUTING=url node tests/bench/bench_sustained.mjs
fi

# 4. Data-plane GET /health of envd, wrk 64 connections: through the gateway
# with the module's route cache and with a lookup on every request (the same
# server rendered with the cache bypassed, on port +2), beside nginx serving a
# static file and beside straight to envd (plain HTTP to the container).
dp_ans=$(curl -s --cacert "$NODE_EXTRA_CA_CERTS" -H "X-API-Key: $key2" \
    -X POST "$CORRAL_URL/v1/sandboxes" -d '{"template":"base","cpu_cores":2,"memory_mb":512}')
dp_sb=$(sed -nE 's/.*"sandbox_id":"([0-9a-z]+)".*/\1/p' <<<"$dp_ans")
[ -n "$dp_sb" ] || { echo "bench: the data plane's sandbox was not created: $dp_ans" >&2; exit 1; }
dp_ip=$(node tests/bench/sandbox_ip.mjs "$dp_sb")
dp_wrk() {
    wrk_run -H "E2b-Sandbox-Id: $dp_sb" -H "E2b-Sandbox-Port: 49983" "https://localhost:$1/health" | parse
}
# CPU per request of the three processes on the gateway's path (decision 0057)
dp_ngx=$(pgrep -P "$(cat "$CORRAL_RUN/nginx.pid")" | tr '\n' ' ')
dp_envd=$(docker inspect -f '{{.State.Pid}}' "$(docker ps -q --filter "name=$dp_sb" | head -1)")
dp_cpu() { # shellcheck disable=SC2086 # a list of pids
    echo "$(tests/bench/cpu_ticks.sh $dp_ngx) $(tests/bench/cpu_ticks.sh "$(cat "$CORRAL_RUN/pids/workerd.pid")") $(tests/bench/cpu_ticks.sh "$dp_envd")"
}
read -r ta0 tb0 tc0 <<<"$(dp_cpu)"
read -r c_rps c_p99 c_bad <<<"$(dp_wrk $((CORRAL_PORT + 1)))"
read -r ta1 tb1 tc1 <<<"$(dp_cpu)"
read -r b_rps b_p99 b_bad <<<"$(dp_wrk $((CORRAL_PORT + 2)))"
read -r d_rps d_p99 d_bad <<<"$(wrk_run "http://$dp_ip:49983/health" | parse)"
read -r s_rps s_p99 _ <<<"$(wrk_run "$CORRAL_URL/static.json" | parse)"
curl -s -o /dev/null --cacert "$NODE_EXTRA_CA_CERTS" -H "X-API-Key: $key2" -X DELETE "$CORRAL_URL/v1/sandboxes/$dp_sb"
echo
echo "data plane: GET envd /health, wrk 64 connections, ${DURATION}s:"
printf '  gateway, route cache     %8.0f req/s   p99 %7.2f ms   (non-2xx: %s)\n' "$c_rps" "$c_p99" "$c_bad"
printf '  gateway, lookup per req  %8.0f req/s   p99 %7.2f ms   (non-2xx: %s)\n' "$b_rps" "$b_p99" "$b_bad"
printf '  straight to envd (plain) %8.0f req/s   p99 %7.2f ms   (non-2xx: %s)\n' "$d_rps" "$d_p99" "$d_bad"
printf '  nginx static file (TLS)  %8.0f req/s   p99 %7.2f ms\n' "$s_rps" "$s_p99"
awk -v c="$c_rps" -v b="$b_rps" -v d="$d_rps" -v s="$s_rps" \
    'BEGIN {printf "  ratio cache/lookup %.2f   gateway/direct %.2f   gateway/static %.2f   (goal: >= 10000 req/s, p99 < 10 ms)\n", c/b, c/d, c/s}'
awk -v n="$c_rps" -v d="$DURATION" -v hz="$(getconf CLK_TCK)" -v a=$((ta1 - ta0)) -v b=$((tb1 - tb0)) -v c=$((tc1 - tc0)) -v k="$(nproc)" \
    'BEGIN {u = 1e6 / hz / (n * d); printf "  CPU per gateway request: nginx %.0f us, workerd %.0f us, envd %.0f us (%d cores: %d,000,000 us per second)\n", a*u, b*u, c*u, k, k}'

# 5. Admission + placement with 1,000 registered workers.
[ "$ONLY" = all ] || exit 0
node tests/bench/register_workers.mjs "$ws" 1000
echo "admission + placement, 1000 workers (500 in the workspace, 500 in the fleet):"
printf '  '; build/bin/bench_sched "$CORRAL_RUN/corral.conf" "$ws" 2000
echo "  (goal: p99 < 2000 us)"

# 6. Several gateway hosts and Redis failovers, on a stack of their own (issue 16).
conf/stack.sh down >/dev/null 2>&1
bash tests/bench/bench_hosts.sh

# 7. A worker through its tunnel against the direct data port, on a stack of its own (issue 29).
bash tests/bench/bench_tunnel.sh
