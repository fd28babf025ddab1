#!/usr/bin/env bash
# conf/stack.sh: brings the whole Corral stack up on this machine, or down.
#
#   conf/stack.sh up      start redis, 2 corral-api, corral-sched, nginx (TLS), and
#                         with CORRAL_WORKERD=1 (make up) dockerd and one workerd;
#                         already up: says so, starts nothing, prints the exports;
#                         partly up: stops what is left, starts afresh; a failed
#                         up stops everything it started (decision 0041)
#   conf/stack.sh down    stop every process of this state dir's stack and remove
#                         what `up` made that outlives them (decision 0072)
#   conf/stack.sh env     print the exports for clients
#   conf/stack.sh conf    print the corral.conf `up` would write (starts nothing)
#   conf/stack.sh <ctl>   stop-redis | start-redis | kill-api N | start-api N | start-dockerd | status
#                         | kill-tunneld [SIGNAL] | start-tunneld
#                         | kill-host N | start-host N | balance N (CORRAL_GATEWAY_HOSTS)
#                         | start-redis-replica (CORRAL_REDIS_HA)
#   conf/stack.sh redis-cli ARGS...   redis-cli as the stack's Redis admin (corral-admin)
#
# Settings (environment): CORRAL_RUN (state dir, default /var/lib/corral-dev),
# CORRAL_PORT (HTTPS port, 8443), CORRAL_REDIS_PORT (6390), CORRAL_PROFILE
# (dev | test | bench), CORRAL_BUILD (binaries dir, build/bin), CORRAL_DOMAIN,
# CORRAL_LEASE_MS, CORRAL_CREATE_TIMEOUT_MS and CORRAL_KEY_RATE (a worker's
# lease, a create's wait, a key's requests a second, instead of the profile's),
# CORRAL_WORKER_ADDRS (where workers' data ports may be, exactly: corral.conf
# worker_data_addrs and the gateway's corral_upstream_allow; default each
# workerd's data port, CORRAL_WORKERD_DATA_PORT (7001) + N - 1; decision 0061),
# CORRAL_WORKER_ADDRS_EXTRA (more, added: test workers' data ports),
# CORRAL_WORKER_NETWORKS / CORRAL_WORKER_PORTS (networks and their ports, for
# workers on a LAN: worker_data_networks / _ports; default none, 7001; never
# loopback), CORRAL_FLEET_SHARE
# (fleet_share, instead of the profile's), CORRAL_CEILING_MAX_CONCURRENT
# (ceiling_max_concurrent_sandboxes, instead of the profile's), CORRAL_AUDIT_RETENTION_S
# (audit_retention_s, default 30 days; decision 0045), CORRAL_REDIS_HA=1 (a
# replica on CORRAL_REDIS_PORT+1 and three sentinels on +2..+4, which
# corral.conf finds the primary through; decision 0058, conf/redis-ha.sh),
# CORRAL_REDIS_CLUSTER=1 (Redis as a one-node cluster: CROSSSLOT refused;
# =N, N >= 2: N nodes on CORRAL_REDIS_PORT.., slots spread, redis_cluster = 1),
# CORRAL_GATEWAY_HOSTS=N (N gateway hosts, each a network namespace with
# nginx and two corral-api, behind a TCP balancer on PORT; decision 0059,
# conf/gateway-hosts.sh; CORRAL_HOSTS_NET, default 10.233.0, their /24),
# CORRAL_WORKERD=N (N workerd on the one dockerd; the second is workerd-2),
# CORRAL_CONN_API / CORRAL_CONN_DATA / CORRAL_CONN_SANDBOX (nginx's limit_conn
# budgets: API and data-plane requests in progress per client address, and
# per sandbox, instead of the profile's; decision 0068), CORRAL_SUPERVISE
# (1: every daemon under conf/supervise.sh, restarted when it dies, as the
# systemd units do; the default for dev, `make up`; 0 for test and bench,
# whose tests kill daemons and start them again themselves; decision 0072),
# CORRAL_REGISTRY (where Corral's registry listens, corral.conf's registry:
# default 127.0.0.1:5000, or 127.0.0.1:PORT+3 when CORRAL_PORT is not 8443;
# empty: no registry; decision 0079), CORRAL_TUNNEL=1 (the stack's workerd
# reached through its tunnel, listening on no TCP port; decision 0087;
# CORRAL_TUNNEL_WORKERS="2": only those workerd), CORRAL_WORKERD_EXTRA (lines
# for every workerd's config) and CORRAL_WORKERD_EXTRA_N (for workerd N's),
# CORRAL_TUNNEL_PORTS (corral-tunneld's address and ports, default
# 127.0.0.1:PORT+50-PORT+81).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# Absolute and resolved: the processes of this stack are found by these paths.
RUN=$(realpath -m "${CORRAL_RUN:-/var/lib/corral-dev}")
PORT=${CORRAL_PORT:-8443}
REDIS_PORT=${CORRAL_REDIS_PORT:-6390}
PROFILE=${CORRAL_PROFILE:-dev}
BIN=${CORRAL_BUILD:-$ROOT/build/bin}
DOMAIN=${CORRAL_DOMAIN:-corral.localhost}
# The data plane's second port, for E2B_SANDBOX_URL (header routing).
DATA_PORT=${CORRAL_SANDBOX_PORT:-$((PORT + 1))}
MODULE=${CORRAL_NGINX_MODULE:-$ROOT/build/nginx-module/ngx_http_corral_module.so}
HOSTS=${CORRAL_GATEWAY_HOSTS:-0}
CLUSTER=${CORRAL_REDIS_CLUSTER:-0}
WORKERS=${CORRAL_WORKERD:-0}
# shellcheck source=conf/gateway-hosts.sh
. "$ROOT/conf/gateway-hosts.sh"
# With gateway hosts, Redis and the workers' data ports are also on the bridge.
REDIS_ADDR=127.0.0.1
[ "$HOSTS" -ge 1 ] && REDIS_ADDR=$HOSTS_NET.1
WORKERD_PORT=${CORRAL_WORKERD_DATA_PORT:-7001}
# corral-tunneld's ports (decision 0087): 32 from PORT + 50, clear of the
# next stack's ports (the test suites' stacks are 100 apart).
TUNNEL_RANGE=$((PORT + 50))-$((PORT + 81))
TUNNEL_PORTS=${CORRAL_TUNNEL_PORTS:-$REDIS_ADDR:$TUNNEL_RANGE}
# With gateway hosts, each host's corral-tunneld holds tunnels on its own
# address (host_tunnel_ports): corral.conf's tunnel_peers and the gateway's
# allow list name them all, for a tunnel may be held on any host.
TUNNEL_ALL=$TUNNEL_PORTS
if [ "$HOSTS" -ge 1 ]; then
    TUNNEL_ALL=""
    for _h in $(seq 1 "$HOSTS"); do TUNNEL_ALL+="$HOSTS_NET.$((10 + _h)):$TUNNEL_RANGE "; done
    TUNNEL_ALL=${TUNNEL_ALL% }
fi
# Each workerd's data port exactly, never a range: Redis and every other
# service of this machine listen on the same addresses (issue 25, 0061).
default_worker_addrs() {
    local n addrs=""
    for n in $(seq 1 $((WORKERS > 1 ? WORKERS : 1))); do
        addrs+=" $REDIS_ADDR:$((WORKERD_PORT + n - 1))"
    done
    echo "${addrs# }"
}
WORKER_ADDRS="${CORRAL_WORKER_ADDRS:-$(default_worker_addrs)}${CORRAL_WORKER_ADDRS_EXTRA:+ $CORRAL_WORKER_ADDRS_EXTRA}"
WORKER_NETWORKS=${CORRAL_WORKER_NETWORKS:-}
WORKER_PORTS=${CORRAL_WORKER_PORTS:-7001}
API_PROCS=2
# Corral's registry (docker-registry, decision 0079): on loopback, which
# dockerd reaches over plain HTTP; its key and certificate beside the secrets.
# 5000 for the stack on the default port (`make up`); a stack on ports of its
# own (the suites') gets PORT+3, so that it never finds make up's registry.
REGISTRY_ADDR=${CORRAL_REGISTRY-127.0.0.1:$([ "$PORT" = 8443 ] && echo 5000 || echo $((PORT + 3)))}
# What `up` chose, for the commands after it (`kill-api`, `start-redis`, ...).
SUPERVISE=$(cat "$RUN/supervised" 2>/dev/null || echo "${CORRAL_SUPERVISE:-$([ "$PROFILE" = dev ] && echo 1 || echo 0)}")

die() { echo "stack: $*" >&2; exit 1; }

profile_settings() {
    # poll/lease short in tests so that dead workers are noticed within seconds.
    case "$PROFILE" in
    dev)   POLL=20000 LEASE=45000 CREATE=60000 GRACE=5000 SWEEP=250
           RATE_KEY=50 BURST_KEY=200 RATE_ADDR=200 BURST_ADDR=400 ;;
    test)  POLL=2000 LEASE=5000 CREATE=20000 GRACE=1000 SWEEP=200
           RATE_KEY=200 BURST_KEY=400 RATE_ADDR=5000 BURST_ADDR=5000 ;;
    bench) POLL=20000 LEASE=45000 CREATE=60000 GRACE=5000 SWEEP=250
           RATE_KEY=1000000 BURST_KEY=100000 RATE_ADDR=1000000 BURST_ADDR=100000 ;;
    *) die "CORRAL_PROFILE must be dev, test or bench" ;;
    esac
    LEASE=${CORRAL_LEASE_MS:-$LEASE} CREATE=${CORRAL_CREATE_TIMEOUT_MS:-$CREATE}
    RATE_KEY=${CORRAL_KEY_RATE:-$RATE_KEY}
    # Fleet fairness (decision 0034): a workspace holds at most this % of the
    # unscoped fleet. `make up` (dev) runs what operators run (decision 0063);
    # bench is one tenant measuring the whole fleet: no share there.
    # The operator's ceiling on max_concurrent_sandboxes (decision 0063): the
    # production default but for bench, which measures hundreds at once. The
    # other ceilings are corral.conf's defaults.
    FLEET_SHARE=50 CEILING_MAX_CONCURRENT=100
    [ "$PROFILE" = bench ] && FLEET_SHARE=100 CEILING_MAX_CONCURRENT=1000
    FLEET_SHARE=${CORRAL_FLEET_SHARE:-$FLEET_SHARE}
    CEILING_MAX_CONCURRENT=${CORRAL_CEILING_MAX_CONCURRENT:-$CEILING_MAX_CONCURRENT}
    # Requests in progress at once (nginx limit_conn, decision 0068): per
    # client address on the API and on the data plane, and per sandbox.
    # dev runs the production defaults (conf/install.sh's). The suites run
    # from one address, 127.0.0.1: test keeps the data plane's defaults (the
    # integration and e2b suites hold far fewer streams) but raises the API's
    # (admission.test.mjs sends 200 creates at once); bench is one client
    # measuring the whole gateway (1,000 streams held from one address).
    CONN_API=64 CONN_DATA=256 CONN_SANDBOX=128
    [ "$PROFILE" = test ] && CONN_API=512
    [ "$PROFILE" = bench ] && CONN_API=4096 CONN_DATA=4096 CONN_SANDBOX=1024
    CONN_API=${CORRAL_CONN_API:-$CONN_API}
    CONN_DATA=${CORRAL_CONN_DATA:-$CONN_DATA}
    CONN_SANDBOX=${CORRAL_CONN_SANDBOX:-$CONN_SANDBOX}
}

start_bg() { # name, then the command; its pid goes to $RUN/pids/name.pid
    local name=$1; shift
    if [ "$SUPERVISE" = 1 ]; then supervised "$name" "$RUN/pids/$name.pid" "$@"; return; fi
    setsid "$@" >>"$RUN/log/$name.log" 2>&1 < /dev/null &
    echo $! > "$RUN/pids/$name.pid"
}

# How each daemon is restarted and stopped: the systemd units' Restart=,
# RestartSec=, and stop signal (conf/systemd/, Debian's redis-server, nginx
# and docker units); the stop timeouts are the stack's own, shorter than the
# units' TimeoutStopSec= (a `down` should not take minutes).
sup_opts() { # name
    case "$1" in
    nginx | gw[1-9]-nginx) echo "-r on-failure -d 2 -s QUIT -t 10" ;;
    workerd*) echo "-r always -d 2 -s TERM -t 10" ;;
    dockerd) echo "-r always -d 2 -s TERM -t 30" ;;
    *) echo "-r always -d 1 -s TERM -t 10" ;;
    esac
}

# NAME run by conf/supervise.sh (decision 0072): the supervisor's pid in
# $RUN/supervise/NAME.pid (its command line names that path: stack_pids finds
# it), the daemon's in PIDFILE at each start ("": $RUN/supervise/NAME.child,
# for nginx, which writes its own pid file too).
# Never two of one name: a live one is stopped first.
supervised() { # name, pid file of the daemon, command...
    local name=$1 pf=${2:-$RUN/supervise/$1.child} sp="$RUN/supervise/$1.pid"
    shift 2
    mkdir -p "$RUN/supervise"
    if [ -f "$sp" ] && running "$(cat "$sp")"; then stop_pid "$name"; fi
    rm -f "$pf"
    # shellcheck disable=SC2046 # the options are words
    setsid bash -c 'exec -a corral-supervise bash "$@"' _ "$ROOT/conf/supervise.sh" $(sup_opts "$name") \
        -p "$pf" "$RUN/supervise/$name" -- "$@" >>"$RUN/log/$name.log" 2>&1 </dev/null &
    echo $! > "$sp"
    # The daemon's pid is there when this returns (start_workerd reads it).
    for _ in $(seq 1 500); do [ -s "$pf" ] && return 0; sleep 0.02; done
    die "the supervisor of $name did not start it (logs in $RUN/log/$name.log)"
}

# A process that exited but was not reaped (a zombie) counts as gone. No
# fork here nor in stack_pids, which reads every process: on a loaded
# machine a fork per process made one look take tens of seconds.
running() {
    local st
    { read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
    st=${st##*) }
    [ "${st%% *}" != Z ]
}

stop_pid() { # name [signal]
    local f="$RUN/pids/$1.pid" s="$RUN/supervise/$1.pid" pid t
    # Supervised: its supervisor stops it (SIGKILL: USR1) and exits, never
    # restarting what is being stopped.
    if [ -f "$s" ]; then
        pid=$(cat "$s")
        if running "$pid"; then
            if [ "${2:-TERM}" = KILL ]; then kill -USR1 "$pid"; else kill -TERM "$pid"; fi 2>/dev/null || true
            t=$(sup_opts "$1"); t=${t##*-t }
            for _ in $(seq 1 $(((t + 5) * 10))); do running "$pid" || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
        rm -f "$s"
    fi
    [ -f "$f" ] || return 0
    pid=$(cat "$f")
    kill "-${2:-TERM}" "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do running "$pid" || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$f"
}

# Every live process of this state dir's stack, of any generation: the daemons
# name this dir's config files on their command lines (nginx's master keeps
# them in its title), Redis runs in $RUN/redis (it rewrites its title; with
# CORRAL_REDIS_HA, its replica and sentinels in $RUN/redis-replica and
# $RUN/sentinel-N), and
# nginx's workers are children of such a master; supervisors name
# $RUN/supervise/ (but dockerd's: dockerd is stopped last, by `down`,
# stop_dockerd). Only our daemons' names count,
# and whole paths: another state dir's processes never match.
stack_pids() {
    local d p argv name args masters=()
    for d in /proc/[0-9]*; do
        p=${d#/proc/}
        { mapfile -d '' -t args <"$d/cmdline"; } 2>/dev/null || continue
        [ ${#args[@]} -gt 0 ] || continue
        argv=" ${args[*]} "
        name=${argv#" "}; name=${name%%" "*}; name=${name##*/}; name=${name%:}
        case "$name" in corral-api|corral-sched|corral-tunneld|workerd|nginx|redis-server|docker-registry|corral-supervise) ;; *) continue ;; esac
        running "$p" || continue
        case "$argv" in
        *" $RUN/supervise/dockerd "*) ;;
        *" $RUN/supervise/"*) [ "$name" = corral-supervise ] && echo "$p" ;;
        *" $RUN/corral.conf "*|*" $RUN/workerd.conf "*|*" $RUN/workerd-2.conf "*|*" $RUN/registry.yml "*) echo "$p" ;;
        *" $RUN/nginx.conf "*|*" $RUN/gw-"[1-9]"/nginx.conf "*) echo "$p"; masters+=("$p") ;;
        *) [ "$name" = redis-server ] && case "$(readlink "$d/cwd" 2>/dev/null)" in
               "$RUN/redis" | "$RUN"/redis-[2-9] | "$RUN/redis-replica" | "$RUN"/sentinel-[123]) echo "$p" ;; esac ;;
        esac
    done
    for p in "${masters[@]}"; do pgrep -P "$p" || true; done
}

# Stops whatever stack_pids finds (strays of earlier generations too).
stop_strays() {
    local pids
    pids=$(stack_pids)
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    for _ in $(seq 1 100); do
        pids=$(stack_pids)
        [ -n "$pids" ] || break
        sleep 0.1
    done
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    local f
    for f in "$RUN"/pids/*.pid "$RUN"/supervise/*.pid; do
        case "$f" in */dockerd.pid) ;; *) rm -f "$f" ;; esac
    done
    rm -f "$RUN/nginx.pid"
}

# up: every daemon this configuration runs has a live pid of this stack;
# partial: some process of this stack lives; down: none does.
stack_state() {
    local live n f s files=("$RUN/nginx.pid" "$RUN/pids/redis.pid" "$RUN/pids/sched.pid")
    live=" $(stack_pids | tr '\n' ' ') "
    [ "$live" = "  " ] && { echo down; return; }
    if [ "$HOSTS" -ge 1 ]; then
        mapfile -t -O ${#files[@]} files < <(hosts_pid_files)
    else
        for n in $(seq 1 $API_PROCS); do files+=("$RUN/pids/api-$n.pid"); done
    fi
    [ "$PROFILE" = test ] && files+=("$RUN/pids/sched-2.pid")
    [ -z "$REGISTRY_ADDR" ] || files+=("$RUN/pids/registry.pid")
    for n in $(seq 1 "$WORKERS"); do files+=("$RUN/pids/$(workerd_name "$n").pid"); done
    for f in "${files[@]}"; do
        [[ -f $f && $live == *" $(cat "$f") "* ]] && continue
        # A supervised daemon that is being restarted is up: its supervisor lives.
        s=$(supervisor_file "$f")
        [[ -f $s && $live == *" $(cat "$s") "* ]] || { echo partial; return; }
    done
    echo up
}

supervisor_file() { # a daemon's pid file: its supervisor's
    case "$1" in
    "$RUN/nginx.pid") echo "$RUN/supervise/nginx.pid" ;;
    "$RUN"/gw-[1-9]/nginx.pid) local d=${1%/nginx.pid}; echo "$RUN/supervise/gw${d##*/gw-}-nginx.pid" ;;
    *) echo "$RUN/supervise/${1##*/}" ;;
    esac
}

# What `up` makes that outlives its processes, recorded in $RUN/owned/
# before it is made (an `up` killed half-way leaves the record), so that
# `down` removes it, and only it (decision 0072): `dockerd` (this stack
# started it), `mount` (the btrfs data root it mounted for that dockerd: its
# path), `egress-net` (the corral-egress network its workerd made) and
# `nft-table` (workerd's table inet corral). Whatever was there before `up`
# is another's (dockerd is shared with every other stack and test here).
OWNED=$RUN/owned
DOCKER_SH=$ROOT/tests/lib/docker.sh

docker_answers() { curl -sf --max-time 3 --unix-socket /var/run/docker.sock http://d/_ping >/dev/null 2>&1; }

# The dockerd that answers is this stack's: its supervisor lives, or (not
# supervised) docker.sh's pid file names a live dockerd and `up` recorded it.
dockerd_ours() {
    { [ -f "$RUN/supervise/dockerd.pid" ] && running "$(cat "$RUN/supervise/dockerd.pid")"; } \
        || { [ -f "$OWNED/dockerd" ] && bash "$DOCKER_SH" running; }
}

# dockerd for the workers: the one that answers, else one of this stack's.
start_dockerd() {
    mkdir -p "$OWNED"
    if docker_answers; then
        dockerd_ours || rm -f "$OWNED/dockerd" "$OWNED/mount"
        bash "$DOCKER_SH" start   # daemon.json's runtimes and pools (it starts nothing)
        return 0
    fi
    local fs
    fs=$(bash "$DOCKER_SH" fs-dir)
    touch "$OWNED/dockerd"
    mountpoint -q "$fs" || echo "$fs" > "$OWNED/mount"
    if [ "$SUPERVISE" = 1 ]; then
        supervised dockerd "$RUN/pids/dockerd.pid" env DOCKERD_LOG="$RUN/log/dockerd.log" bash "$DOCKER_SH" run
        for _ in $(seq 1 300); do
            docker_answers && return 0
            running "$(cat "$RUN/supervise/dockerd.pid")" || break
            sleep 0.2
        done
        die "dockerd did not answer within 60 s (logs in $RUN/log/dockerd.log)"
    fi
    bash "$DOCKER_SH" start || die "dockerd did not start"
}

# dockerd, when this stack started it, and the data root's mount it made.
stop_dockerd() {
    local fs
    if [ -f "$RUN/supervise/dockerd.pid" ] && running "$(cat "$RUN/supervise/dockerd.pid")"; then
        stop_pid dockerd
    elif [ -f "$OWNED/dockerd" ] || [ "$(cat "$RUN/docker-owned" 2>/dev/null)" = 1 ]; then
        bash "$DOCKER_SH" stop
    fi
    rm -f "$OWNED/dockerd" "$RUN/docker-owned" "$RUN/supervise/dockerd.pid" "$RUN/pids/dockerd.pid"
    if [ -f "$OWNED/mount" ]; then
        fs=$(cat "$OWNED/mount")
        if docker_answers; then
            echo "stack: a dockerd still answers: leaving $fs mounted" >&2
        elif mountpoint -q "$fs"; then
            umount -R "$fs" || echo "stack: could not unmount $fs" >&2
        fi
        rm -f "$OWNED/mount"
    fi
}

# Before the first workerd starts: the host objects it will make.
record_host_objects() {
    mkdir -p "$OWNED"
    docker network inspect corral-egress >/dev/null 2>&1 || touch "$OWNED/egress-net"
    command -v nft >/dev/null && ! nft list table inet corral >/dev/null 2>&1 && touch "$OWNED/nft-table"
    return 0
}

# The corral-egress network and the nftables table, if this stack's workerd
# made them and no other workerd on this machine (another stack's, a
# test's) uses them now. After this stack's workerd stopped.
remove_host_objects() {
    local others
    [ -f "$OWNED/egress-net" ] || [ -f "$OWNED/nft-table" ] || return 0
    others=$(pgrep -x workerd | tr '\n' ' ' || true)
    if [ -n "$others" ]; then
        echo "stack: leaving corral-egress and table inet corral to the other workerd here (pids $others)" >&2
        rm -f "$OWNED/egress-net" "$OWNED/nft-table"
        return 0
    fi
    if [ -f "$OWNED/egress-net" ] && docker_answers; then
        if docker network inspect corral-egress >/dev/null 2>&1; then
            timeout 60 docker network rm corral-egress >/dev/null 2>&1 \
                || echo "stack: could not remove the corral-egress network" >&2
        fi
        rm -f "$OWNED/egress-net"
    fi
    if [ -f "$OWNED/nft-table" ] && nft list table inet corral >/dev/null 2>&1; then
        nft delete table inet corral || echo "stack: could not delete table inet corral" >&2
    fi
    rm -f "$OWNED/nft-table"
}

# A failed `up` (any step, or Ctrl-C) undoes everything it did: nothing of
# this stack ran before it (stack_state), so all `down` finds is its own.
up_failed() {
    local rc=$?
    [ "$rc" -ne 0 ] || return 0
    set +e
    echo "stack: up failed: stopping what it started (logs in $RUN/log)" >&2
    down
    exit "$rc"
}

wait_for() { # description, test command...
    local what=$1; shift
    for _ in $(seq 1 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
    die "$what did not come up (logs in $RUN/log)"
}

make_tls() {
    [ -f "$RUN/tls/server.crt" ] && grep -q "IP:$(host_addr "$HOSTS")" "$RUN/tls/san.ext" 2>/dev/null && return 0
    mkdir -p "$RUN/tls" && chmod 700 "$RUN/tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=Corral local CA" \
        -keyout "$RUN/tls/ca.key" -out "$RUN/tls/ca.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$DOMAIN" \
        -keyout "$RUN/tls/server.key" -out "$RUN/tls/server.csr" 2>/dev/null
    # The gateway hosts' own addresses too, so that a test can pick one host.
    local ips=",IP:127.0.0.1" i
    for i in $(seq 1 "$HOSTS"); do ips+=",IP:$(host_addr "$i")"; done
    printf 'subjectAltName=DNS:localhost,DNS:%s,DNS:*.%s%s\n' "$DOMAIN" "$DOMAIN" "$ips" \
        > "$RUN/tls/san.ext"
    openssl x509 -req -in "$RUN/tls/server.csr" -CA "$RUN/tls/ca.crt" -CAkey "$RUN/tls/ca.key" \
        -CAcreateserial -days 3650 -extfile "$RUN/tls/san.ext" -out "$RUN/tls/server.crt" 2>/dev/null
}

write_conf() {
    umask 077
    local s
    for s in secret gateway-secret redis-password redis-admin-password; do
        [ -f "$RUN/$s" ] || openssl rand -hex 32 > "$RUN/$s"
    done
    # Redis's users (decision 0030): hashes of the two passwords, made afresh.
    bash "$ROOT/conf/redis-acl.sh" "$RUN/redis-password" "$RUN/redis-admin-password" \
        > "$RUN/redis-users.acl"
    if [ -n "$REGISTRY_ADDR" ]; then
        bash "$ROOT/conf/registry.sh" key "$RUN"
        mkdir -p "$RUN/registry"
        bash "$ROOT/conf/registry.sh" conf "$RUN/registry" "$REGISTRY_ADDR" \
            "https://localhost:$PORT/v1/registry/token" "$RUN/registry.crt" > "$RUN/registry.yml"
    fi
    corral_conf_text > "$RUN/corral.conf"
    # A replica and three sentinels beside Redis (decision 0058)
    if [ "${CORRAL_REDIS_HA:-0}" = 1 ]; then
        bash "$ROOT/conf/redis-ha.sh" "$RUN" "$REDIS_PORT" "$REDIS_ADDR" >> "$RUN/corral.conf"
    fi
    umask 022
    if [ "$HOSTS" -ge 1 ]; then
        balancer_conf "$HOSTS"
    else
        render_nginx "$RUN" "127.0.0.1:" "$PORT" "$DATA_PORT"
    fi
}

# The profile's corral.conf, on stdout (`conf/stack.sh conf` prints it, so that
# what `make up` runs can be read, and tested, without starting anything).
corral_conf_text() {
    cat <<CONF
redis_host = $REDIS_ADDR
redis_port = $REDIS_PORT
redis_user = corral
redis_password_file = $RUN/redis-password
secret_file = $RUN/secret
gateway_secret_file = $RUN/gateway-secret
domain = $DOMAIN:$PORT
threads = 64
longpoll_max = 16
create_wait_max = 40
max_body_bytes = 1048576
poll_ms = $POLL
lease_ms = $LEASE
create_timeout_ms = $CREATE
grace_ms = $GRACE
sweep_ms = $SWEEP
paused_max_s = ${CORRAL_PAUSED_MAX_S:-86400}
template_ready_s = ${CORRAL_TEMPLATE_READY_S:-0}
max_templates = ${CORRAL_MAX_TEMPLATES:-100}
template_upload_mb = ${CORRAL_TEMPLATE_UPLOAD_MB:-1024}
template_storage_mb = ${CORRAL_TEMPLATE_STORAGE_MB:-20480}
max_builds = ${CORRAL_MAX_BUILDS:-4}
sandbox_max_timeout_s = ${CORRAL_SANDBOX_MAX_TIMEOUT_S:-86400}
worker_data_addrs = $WORKER_ADDRS
tunnel_listen = $RUN/tunneld.sock
tunnel_ports = $TUNNEL_PORTS
tunnel_peers = $TUNNEL_ALL
fleet_share = $FLEET_SHARE
ceiling_max_concurrent_sandboxes = $CEILING_MAX_CONCURRENT
key_rate = $RATE_KEY
key_burst = $BURST_KEY
audit_retention_s = ${CORRAL_AUDIT_RETENTION_S:-2592000}
CONF
    if [ -n "$WORKER_NETWORKS" ]; then
        printf 'worker_data_networks = %s\nworker_data_ports = %s\n' "$WORKER_NETWORKS" "$WORKER_PORTS" \
            >> "$RUN/corral.conf"
    fi
    # Redis Cluster of several nodes: Corral routes each key to its node (0059)
    if [ "$CLUSTER" -ge 2 ]; then echo "redis_cluster = 1"; fi
    # The registry whose tokens corral-api signs with this key (0079)
    if [ -n "$REGISTRY_ADDR" ]; then
        printf 'registry = %s\nregistry_key = %s\nregistry_config = %s\n' \
            "$REGISTRY_ADDR" "$RUN/registry.key" "$RUN/registry.yml"
    fi
}

# One gateway's nginx in DIR (its sockets, pid, logs; the one-host stack's is
# RUN itself), listening on LISTEN ("127.0.0.1:", or "" for every address).
render_nginx() { # dir, listen address prefix, API port, data port
    local dir=$1 at=$2 port=$3 data_port=$4 socks="" i
    for i in $(seq 1 $API_PROCS); do socks+="$dir/api-$i.sock "; done
    # Corral's directives: the include snippets an operator's nginx uses too.
    CORRAL_NGX_SOCKETS=$socks CORRAL_NGX_RATE=$RATE_ADDR CORRAL_NGX_BURST=$BURST_ADDR \
        CORRAL_NGX_BODY=2m CORRAL_NGX_SECRET=$RUN/gateway-secret \
        CORRAL_NGX_CONN_API=$CONN_API CORRAL_NGX_CONN_DATA=$CONN_DATA CORRAL_NGX_CONN_SANDBOX=$CONN_SANDBOX \
        CORRAL_NGX_TUNNELD=$dir/tunneld.sock \
        bash "$ROOT/conf/nginx/render.sh" "$dir/snippets"
    local extra=""
    if [ "$PROFILE" = bench ]; then
        mkdir -p "$dir/www" && echo '{"status":"ok"}' > "$dir/www/static.json"
        extra="        location = /static.json { root $dir/www; }"
    fi
    sed -e "s|@RUN@|$dir|g" -e "s|@PORT@|$port|g" -e "s|@DOMAIN@|$DOMAIN|g" \
        -e "s|listen 127.0.0.1:|listen $at|" \
        -e "s|@USER@|$(id -un)|g" -e "s|@SNIPPETS@|$dir/snippets|g" -e "s|@MODULE@|$MODULE|g" \
        "$ROOT/conf/nginx.conf.in" \
        | awk -v extra="$extra" '{ if ($0 == "@EXTRA_LOCATIONS@") print extra; else print }' \
        > "$dir/nginx.conf"
    render_gateway "$dir" "$dir/gateway.conf" off "*.$DOMAIN" "$at" "$port" "$data_port"
    rm -f "$dir/gateway-bypass.conf"
    if [ "$PROFILE" = bench ]; then
        render_gateway "$dir" "$dir/gateway-bypass.conf" on "_" "$at" "$((port + 2))"
    fi
}

# corral_upstream_allow's words: what corral.conf's worker_data_* say.
upstream_allow() {
    echo "$WORKER_ADDRS $TUNNEL_ALL${WORKER_NETWORKS:+ $WORKER_NETWORKS ports=$(tr -s ' ' ',' <<<"$WORKER_PORTS")}"
}

render_gateway() { # dir, file, cache bypass (on|off), server names, listen address prefix, ports...
    local dir=$1 out=$2 bypass=$3 names=$4 at=$5 listen="" p
    shift 5
    for p in "$@"; do listen+="    listen $at$p ssl http2;"$'\n'; done
    sed -e "s|@RUN@|$dir|g" -e "s|@DOMAIN@|$DOMAIN|g" -e "s|@CACHE_BYPASS@|$bypass|g" \
        -e "s|@SNIPPETS@|$dir/snippets|g" -e "s|@GATEWAY_NAMES@|$names|g" \
        -e "s|@WORKER_ALLOW@|$(upstream_allow)|g" "$ROOT/conf/nginx-gateway.conf.in" \
        | awk -v listen="$listen" '{ if ($0 == "@GATEWAY_LISTEN@") printf "%s", listen; else print }' > "$out"
}

# redis-cli as corral-admin: the password goes through the environment
# (REDISCLI_AUTH), never the command line (`ps` shows that to everyone).
redis_admin() {
    REDISCLI_AUTH=$(cat "$RUN/redis-admin-password") \
        redis-cli --no-auth-warning --user corral-admin -p "$REDIS_PORT" "$@"
}

# Redis's files hold every tenant's state: its dir 0700, the AOF (and any RDB)
# 0600. Redis creates its files with its umask, hence 077; chmod mends a dir
# made by an older stack. The users come from --aclfile (hashes only).
# The replica and the sentinels of CORRAL_REDIS_HA=1; up once they all see
# the primary, its replica and each other, so that a failover can happen.
start_redis_ha() {
    local i
    start_bg redis-replica redis-server "$RUN/redis-replica.conf"
    for i in 1 2 3; do start_bg "sentinel-$i" redis-server "$RUN/sentinel-$i.conf" --sentinel; done
    for _ in $(seq 1 300); do redis_ha_ready && return 0; sleep 0.1; done
    die "the Redis replica and sentinels did not see each other (logs in $RUN/log)"
}

sentinel_cli() { # port, then the command
    local p=$1; shift
    REDISCLI_AUTH=$(cat "$RUN/redis-sentinel-password") redis-cli --no-auth-warning -p "$p" "$@"
}

redis_ha_ready() { # the replica in sync, and every sentinel knows it and the two others
    local i p
    REDISCLI_AUTH=$(cat "$RUN/redis-admin-password") redis-cli --no-auth-warning --user corral-admin \
        -p $((REDIS_PORT + 1)) INFO replication | grep -q '^master_link_status:up' || return 1
    for i in 1 2 3; do
        p=$((REDIS_PORT + 1 + i))
        [ "$(sentinel_cli "$p" SENTINEL replicas corral | grep -c '^flags$')" -ge 1 ] || return 1
        [ "$(sentinel_cli "$p" SENTINEL sentinels corral | grep -c '^flags$')" -ge 2 ] || return 1
    done
}

stop_redis_ha() {
    local i
    for i in 1 2 3; do stop_pid "sentinel-$i"; done
    stop_pid redis-replica
}

start_redis() {
    mkdir -p "$RUN/redis"
    chmod -R go-rwx "$RUN/redis"
    (umask 077; redis_primary_conf > "$RUN/redis.conf"
     start_bg redis redis-server "$RUN/redis.conf")
    [ "$CLUSTER" -ge 2 ] && start_cluster_nodes
    wait_for "redis on port $REDIS_PORT" redis_admin ping
    if [ "$CLUSTER" = 1 ]; then
        redis_admin CLUSTER ADDSLOTSRANGE 0 16383 >/dev/null 2>&1 || true # kept across restarts
        wait_for "the one-node Redis cluster" cluster_ok
    elif [ "$CLUSTER" -ge 2 ]; then
        # made once: a restarted node finds the others in its nodes.conf
        redis_admin CLUSTER INFO | grep -q '^cluster_known_nodes:1\b' && make_cluster
        wait_for "the Redis cluster of $CLUSTER nodes" cluster_ok
    fi
}

# CORRAL_REDIS_CLUSTER=N (N >= 2): nodes 2..N on REDIS_PORT+1.., each in
# RUN/redis-<n> with its own config; `make_cluster` spreads the slots over
# all N once (kept across restarts in their nodes.conf).
start_cluster_nodes() {
    local n
    for n in $(seq 2 "$CLUSTER"); do
        # `start-redis` after `stop-redis` brings back node 1; the others run on
        [ -f "$RUN/pids/redis-$n.pid" ] && running "$(cat "$RUN/pids/redis-$n.pid")" && continue
        mkdir -p "$RUN/redis-$n"
        (umask 077; REDIS_PORT=$((REDIS_PORT + n - 1)) redis_primary_conf \
            | sed "s|^dir .*|dir $RUN/redis-$n|" > "$RUN/redis-$n.conf"
         start_bg "redis-$n" redis-server "$RUN/redis-$n.conf")
        wait_for "redis node $n" redis_admin -p $((REDIS_PORT + n - 1)) ping
    done
}

make_cluster() {
    local nodes=() n
    for n in $(seq 1 "$CLUSTER"); do nodes+=("127.0.0.1:$((REDIS_PORT + n - 1))"); done
    REDISCLI_AUTH=$(cat "$RUN/redis-admin-password") redis-cli --no-auth-warning --user corral-admin \
        --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >>"$RUN/log/redis-cluster.log" 2>&1 \
        || die "redis-cli --cluster create failed (see $RUN/log/redis-cluster.log)"
}

# The primary's config, its own file (0600): a sentinel that makes a
# restarted old primary a replica rewrites it (CONFIG REWRITE), never the
# shipped conf/redis.conf. It is made afresh at each start; the sentinels
# then tell a restarted old primary whom to follow.
redis_primary_conf() {
    echo "include $ROOT/conf/redis.conf"
    echo "port $REDIS_PORT"
    echo "bind 127.0.0.1 ::1 ${REDIS_ADDR#127.0.0.1}"
    echo "dir $RUN/redis"
    echo "aclfile $RUN/redis-users.acl"
    # CORRAL_REDIS_CLUSTER=1: a cluster of one node holding every slot. Redis
    # then refuses any command or script whose keys are in two slots
    # (CROSSSLOT), which is what Redis Cluster needs (decision 0058).
    if [ "$CLUSTER" -ge 1 ]; then
        echo "cluster-enabled yes"
        echo "cluster-config-file nodes.conf"
    fi
    # Under Sentinel the primary may come back as a replica: it logs in to
    # the new primary as the replica does.
    if [ "${CORRAL_REDIS_HA:-0}" = 1 ]; then
        echo "masteruser corral-admin"
        echo "masterauth $(cat "$RUN/redis-admin-password")"
    fi
}

cluster_ok() { redis_admin CLUSTER INFO | grep -q '^cluster_state:ok'; }

# The registry answers /v2/ with 401 and a Bearer challenge: token auth is on.
registry_challenges() {
    [ "$(curl -s -o /dev/null --max-time 2 -w '%{http_code}' "http://$REGISTRY_ADDR/v2/")" = 401 ]
}

# docker-registry on REGISTRY_ADDR, its blobs in $RUN/registry (0700).
# Another registry already there (another stack's) would pass the wait in
# its place: refused first, and this one must still live after the wait.
start_registry() {
    [ -n "$REGISTRY_ADDR" ] || return 0
    if curl -s -o /dev/null --max-time 2 "http://$REGISTRY_ADDR/"; then
        die "something already listens on $REGISTRY_ADDR: stop it, or set CORRAL_REGISTRY"
    fi
    mkdir -p "$RUN/registry"
    chmod 700 "$RUN/registry"
    start_bg registry docker-registry serve "$RUN/registry.yml"
    wait_for "the registry on $REGISTRY_ADDR" registry_challenges
    running "$(cat "$RUN/pids/registry.pid")" || die "the registry exited (logs in $RUN/log/registry.log)"
}

# workerd N's name: its pid, log, config, token and state dir (N=1: workerd).
workerd_name() { if [ "$1" = 1 ]; then echo workerd; else echo "workerd-$1"; fi; }

# "tunnel = on" for workerd N when CORRAL_TUNNEL=1 (every one) or N is in
# CORRAL_TUNNEL_WORKERS ("2": only workerd-2, beside a direct one).
tunnel_line() {
    if [ "${CORRAL_TUNNEL:-0}" = 1 ] || [[ " ${CORRAL_TUNNEL_WORKERS:-} " == *" $1 "* ]]; then
        echo "tunnel = on"
    fi
}

# CORRAL_WORKERD_EXTRA_N: lines for workerd N's config only (after
# CORRAL_WORKERD_EXTRA's, which every one gets): a template one worker alone
# offers, say, so that a test can place a sandbox there.
extra_lines() {
    local var="CORRAL_WORKERD_EXTRA_$1"
    echo "${!var:-}"
}

# workerd N joined to the unscoped fleet, on this machine's dockerd; its data
# port is CORRAL_WORKERD_DATA_PORT + N - 1 (listed for N up to CORRAL_WORKERD,
# or 1: default_worker_addrs).
start_workerd() {
    local n=${1:-1} name
    name=$(workerd_name "$n")
    [ -x "$BIN/workerd" ] || die "$BIN/workerd is missing: run 'make'"
    start_dockerd
    bash "$ROOT/tests/lib/images.sh" >>"$RUN/log/images.log" 2>&1 \
        || die "building the corral/base image failed (see $RUN/log/images.log)"
    # The plain build's server, whichever build runs the stack: a sanitizer
    # build's needs libraries the template does not carry.
    CORRAL_INTERP_BIN=$ROOT/build/bin/corral-interp \
        bash "$ROOT/templates/code-interpreter-v1/build.sh" >>"$RUN/log/images.log" 2>&1 \
        || die "building the code-interpreter-v1 image failed (see $RUN/log/images.log)"
    mkdir -p "$RUN/$name-state"
    (umask 077; CORRAL_CONF="$RUN/corral.conf" "$BIN/corralctl" --json join-token create --ttl 31536000 \
        | sed -E 's/.*"token":"([^"]*)".*/\1/' > "$RUN/$name.token")
    cat > "$RUN/$name.conf" <<CONF
$(tunnel_line "$n")
control_url = https://127.0.0.1:$PORT
ca_file = $RUN/tls/ca.crt
join_token_file = $RUN/$name.token
data_addr = $REDIS_ADDR:$((WORKERD_PORT + n - 1))
state_dir = $RUN/$name-state
template.base = corral/base
template.mcp-gateway = corral/base
template.code-interpreter-v1 = corral/code-interpreter
probe_image = corral/base
${CORRAL_WORKERD_SLOTS:+slots = $CORRAL_WORKERD_SLOTS}
${CORRAL_WORKERD_EXTRA:-}
$(extra_lines "$n")
CONF
    record_host_objects
    # The log is appended to: only this process's lines tell (an earlier
    # generation's "enrolled" would pass at once).
    local from pid
    from=$(stat -c %s "$RUN/log/$name.log" 2>/dev/null || echo 0)
    start_bg "$name" "$BIN/workerd" -c "$RUN/$name.conf"
    pid=$(cat "$RUN/pids/$name.pid")
    # workerd probes its runtimes before it enrols: up to a minute. The
    # process started here must enrol (not a restart of it by its supervisor).
    for _ in $(seq 1 600); do
        tail -c +$((from + 1)) "$RUN/log/$name.log" | grep -q "enrolled as worker" && return 0
        running "$pid" || break
        sleep 0.1
    done
    die "$name did not enrol (logs in $RUN/log/$name.log)"
}

# corral-tunneld: workers behind NAT dial in through nginx (decision 0087).
# On the one-host stack only: with gateway hosts, tunnels are not offered yet.
start_tunneld() {
    [ "$HOSTS" = 0 ] || return 0
    rm -f "$RUN/tunneld.sock"
    start_bg tunneld "$BIN/corral-tunneld" -c "$RUN/corral.conf"
    wait_for "corral-tunneld" test -S "$RUN/tunneld.sock"
}

start_api() {
    # A socket left by a killed one would pass the wait at once.
    rm -f "$RUN/api-$1.sock"
    start_bg "api-$1" "$BIN/corral-api" -c "$RUN/corral.conf" -l "$RUN/api-$1.sock"
    wait_for "corral-api $1" test -S "$RUN/api-$1.sock"
}

# nginx in DIR, as NAME; supervised, in the foreground (its workers are in
# its process group: conf/supervise.sh kills them with it). Then in NETNS.
start_nginx() { # name, dir[, netns]
    local name=$1 dir=$2 ns=()
    [ -z "${3:-}" ] || ns=(ip netns exec "$3")
    "${ns[@]}" nginx -t -q -p "$dir" -c "$dir/nginx.conf" -e "$dir/log/nginx-error.log" \
        || die "nginx rejected $dir/nginx.conf"
    if [ "$SUPERVISE" = 1 ]; then
        local child
        rm -f "$dir/nginx.pid"
        supervised "$name" "" "${ns[@]}" nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/log/nginx-error.log" -g 'daemon off;'
        child=$(cat "$RUN/supervise/$name.child")
        # Its pid file is written once its ports are bound; a first run that
        # exits (a port taken) fails the start, as a daemonizing nginx would.
        for _ in $(seq 1 100); do
            [ "$(cat "$dir/nginx.pid" 2>/dev/null)" = "$child" ] && return 0
            running "$child" || break
            sleep 0.1
        done
        die "nginx did not start (logs in $dir/log/nginx-error.log)"
    else
        "${ns[@]}" nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/log/nginx-error.log"
    fi
}

up() {
    command -v redis-server >/dev/null && command -v nginx >/dev/null \
        || die "redis-server and nginx are missing: run 'make deps'"
    [ -z "$REGISTRY_ADDR" ] || command -v docker-registry >/dev/null \
        || die "docker-registry is missing: run 'make deps'"
    [ -x "$BIN/corral-api" ] || die "$BIN/corral-api is missing: run 'make'"
    [ -f "$MODULE" ] || die "$MODULE is missing: run 'make'"
    profile_settings
    mkdir -p "$RUN"/{log,pids,redis,nginx}
    if [ "$HOSTS" -ge 1 ] && ! { command -v ip >/dev/null && [ -f /usr/lib/nginx/modules/ngx_stream_module.so ]; }; then
        die "gateway hosts need iproute2 and libnginx-mod-stream: run 'make deps'"
    fi
    case "$(stack_state)" in
    up)
        echo "stack: already up in $RUN; started nothing" >&2
        [ "$PROFILE" = dev ] && env_exports
        exit 0 ;;
    partial)
        echo "stack: partly up in $RUN: stopping what is left, starting afresh" >&2
        stop_strays ;;
    esac
    trap up_failed EXIT
    trap 'exit 1' INT TERM
    # Pid files of processes long gone (a reboot, a killed namespace) say nothing.
    local f
    for f in "$RUN"/pids/*.pid "$RUN"/supervise/*.pid; do
        if [ -f "$f" ] && ! running "$(cat "$f")"; then rm -f "$f"; fi
    done
    SUPERVISE=${CORRAL_SUPERVISE:-$([ "$PROFILE" = dev ] && echo 1 || echo 0)}
    echo "$SUPERVISE" > "$RUN/supervised"
    make_tls
    if [ "$HOSTS" -ge 1 ]; then hosts_net_up "$HOSTS"; echo "$HOSTS" > "$RUN/gateway-hosts"; fi
    write_conf
    start_redis
    if [ "${CORRAL_REDIS_HA:-0}" = 1 ]; then start_redis_ha; fi
    start_registry
    if [ "$HOSTS" -ge 1 ]; then
        hosts_up "$HOSTS"
    else
        for i in $(seq 1 $API_PROCS); do start_api "$i"; done
    fi
    start_bg sched "$BIN/corral-sched" -c "$RUN/corral.conf"
    start_tunneld
    # Tests run two sweepers: corral-sched must be safe as several copies.
    [ "$PROFILE" = test ] && start_bg sched-2 "$BIN/corral-sched" -c "$RUN/corral.conf"
    # The dev stack's registry is collected daily, as the packages' timer does (0081).
    if [ "$PROFILE" = dev ] && [ -n "$REGISTRY_ADDR" ]; then
        start_bg registry-gc bash -c 'while sleep 86400; do "$0" -c "$1" registry-gc; done' \
            "$BIN/corralctl" "$RUN/corral.conf"
    fi
    start_nginx nginx "$RUN"
    wait_for "nginx on port $PORT" curl -sf --max-time 2 --cacert "$RUN/tls/ca.crt" "https://localhost:$PORT/health"
    for i in $(seq 1 "$WORKERS"); do start_workerd "$i"; done
    trap - EXIT INT TERM
}

# The stack's sandboxes, ready egress proxies and their networks go with it.
# workerd leaves them running when it stops, so that a restarted workerd finds
# its sandboxes; `down` ends the stack, and nothing of it may stay behind.
remove_worker_objects() { # state dir
    local wid state=$1/worker
    [ -f "$state" ] && command -v docker >/dev/null || return 0
    wid=$(sed -n 's/^worker_id = \([0-9a-f]*\)$/\1/p' "$state")
    [ -n "$wid" ] || return 0
    timeout 120 docker ps -aq --filter "label=corral.worker=$wid" | xargs -r timeout 120 docker rm -f >/dev/null 2>&1 || true
    timeout 60 docker network ls -q --filter "label=corral.worker=$wid" | xargs -r timeout 60 docker network rm >/dev/null 2>&1 || true
}

down() {
    # Best effort: one step that fails must not leave the others undone.
    set +e
    stop_pid nginx
    if [ -f "$RUN/nginx.pid" ]; then
        nginx -p "$RUN" -c "$RUN/nginx.conf" -e "$RUN/log/nginx-error.log" -s quit 2>/dev/null || true
        for _ in $(seq 1 50); do [ -f "$RUN/nginx.pid" ] || break; sleep 0.1; done
    fi
    local w
    for w in "$RUN"/workerd*-state; do
        [ -d "$w" ] || continue
        w=${w##*/}; w=${w%-state}
        stop_pid "$w"
        remove_worker_objects "$RUN/$w-state"
    done
    stop_pid sched
    stop_pid sched-2
    stop_pid registry-gc
    for i in $(seq 1 $API_PROCS); do stop_pid "api-$i"; done
    for f in "$RUN"/pids/gw*-api-*.pid; do
        if [ -f "$f" ]; then f=${f##*/}; stop_pid "${f%.pid}"; fi
    done
    stop_pid redis
    for f in "$RUN"/pids/redis-[2-9].pid; do
        if [ -f "$f" ]; then f=${f##*/}; stop_pid "${f%.pid}"; fi
    done
    stop_redis_ha
    stop_pid registry
    stop_strays
    hosts_down
    # What outlives the processes (decision 0072): the host's objects of
    # this stack's workerd, then its dockerd and the data root's mount.
    remove_host_objects
    stop_dockerd
    rm -f "$RUN/supervised"
}

# A fresh workspace and a member key, once: later ups print the same exports
# ($RUN/exports, mode 600) while its key still works (issue 34: an up on a
# running stack changes nothing). Then, with workers, wait until a create
# would be placed: `make up` returns when the README's snippet works.
env_exports() {
    if [ ! -s "$RUN/exports" ] || ! api_answers "$(sed -n 's/^export E2B_API_KEY=//p' "$RUN/exports")"; then
        new_exports
    fi
    [ "$WORKERS" -ge 1 ] && wait_for_capacity "$(sed -n 's/^export E2B_API_KEY=//p' "$RUN/exports")"
    cat "$RUN/exports"
}

new_exports() {
    local key ws owner member
    key=$(CORRAL_CONF="$RUN/corral.conf" "$BIN/corralctl" --json workspace create "dev-$(date +%s)")
    ws=$(sed -E 's/.*"workspace":"([^"]*)".*/\1/' <<<"$key")
    member=$(CORRAL_CONF="$RUN/corral.conf" "$BIN/corralctl" --json key create --workspace "$ws" --role member \
        | sed -E 's/.*"key":"([^"]*)".*/\1/')
    owner=$(sed -E 's/.*"owner_key":"([^"]*)".*/\1/' <<<"$key")
    (umask 077; echo "$owner" > "$RUN/owner-key"
     cat > "$RUN/exports" <<EXPORTS
# Corral is up. Workspace $ws; its owner key is in $RUN/owner-key (mode 600).
export E2B_API_URL=https://localhost:$PORT
export E2B_API_KEY=$member
export E2B_SANDBOX_URL=https://localhost:$DATA_PORT
export E2B_VOLUME_API_URL=https://localhost:$PORT
export NODE_EXTRA_CA_CERTS=$RUN/tls/ca.crt
export CORRAL_CONF=$RUN/corral.conf
EXPORTS
    )
}

# The key (read from a file, never on a command line) authenticates.
api_answers() {
    [ -n "$1" ] && curl -sf -o /dev/null --cacert "$RUN/tls/ca.crt" -H @- \
        "https://localhost:$PORT/v1/workspace" <<<"X-API-Key: $1"
}

# GET /v1/workers shows a free slot the workspace may use (its own workers'
# or the fleet's): a create would be placed now, not answered 503.
wait_for_capacity() {
    local i
    for i in $(seq 1 120); do
        curl -sf --cacert "$RUN/tls/ca.crt" -H @- "https://localhost:$PORT/v1/workers" <<<"X-API-Key: $1" \
            | grep -Eq '"free_slots": ?[1-9]' && return 0
        sleep 0.5
    done
    die "no worker offers a free slot after 60 s (logs in $RUN/log)"
}

case "${1:-}" in
up) up; [ "$PROFILE" = dev ] && env_exports || true ;;
down) down ;;
env) env_exports ;;
conf) profile_settings; corral_conf_text ;;
stop-redis) stop_pid redis ;;
start-redis) start_redis ;;
kill-api) stop_pid "api-$2" KILL ;;
kill-tunneld) stop_pid tunneld "${2:-KILL}" ;;
start-tunneld) profile_settings; start_tunneld ;;
start-api) profile_settings; start_api "$2" ;;
start-workerd) start_workerd "${2:-1}" ;;
start-dockerd) start_dockerd ;;
kill-host) host_kill "$2" ;;
start-host) profile_settings; host_start "$2" ;;
balance) balance "$2" ;;
start-redis-replica)
    start_bg redis-replica redis-server "$RUN/redis-replica.conf"
    wait_for "the Redis replica" redis_admin -p $((REDIS_PORT + 1)) ping ;;
status) ls "$RUN/pids" ;;
redis-cli) shift; redis_admin "$@" ;;
*) die "usage: conf/stack.sh up|down|env|conf|stop-redis|start-redis|start-redis-replica|kill-api N|start-api N|kill-tunneld [SIGNAL]|start-tunneld|kill-host N|start-host N|balance N|start-workerd [N]|start-dockerd|status|redis-cli ARGS" ;;
esac
