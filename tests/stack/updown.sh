#!/usr/bin/env bash
# tests/stack/updown.sh: conf/stack.sh up and down (issue 9 point 9, issue 34
# point 4), the dev profile of `make up` (every daemon supervised: decision
# 0072), on a state dir and ports of its own:
#   - a second `up` says "already up", starts nothing (the same pids) and prints
#     the same exports again (no new workspace, the owner key kept);
#   - kill -9 of redis, the registry, each corral-api, corral-sched, corral-tunneld and nginx: each is back
#     within seconds by itself, and the API answers the same key;
#   - `down` stops every process of the state dir, a stray of an earlier
#     generation too, and no process of another state dir (a path prefix of it);
#   - an `up` that fails (nginx's port held by this test) leaves nothing running,
#     and a scaled-out one leaves no network namespace or bridge;
#   - with workerd and dockerd: `up` twice, kill -9 of workerd (and of dockerd
#     when the stack started it: no dockerd answers before), then `down`:
#     nothing of the stack left (processes, its worker's containers and
#     networks, and what it made on the host: corral-egress, table inet corral,
#     the dockerd and its data root's mount); the same after an `up` killed -9
#     half-way. Only this stack's things are looked at: other stacks and tests
#     share this dockerd.
# STACK_TEST_RUN, STACK_TEST_PORT, STACK_TEST_REDIS_PORT, STACK_TEST_WORKERD_PORT:
# a state dir and ports instead of fresh ones (the data plane's port is PORT+1).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
# shellcheck source=../lib/ports.sh
. "$ROOT/tests/lib/ports.sh"
# shellcheck source=../lib/wait.sh
. "$ROOT/tests/lib/wait.sh"
export CORRAL_RUN CORRAL_PORT CORRAL_REDIS_PORT CORRAL_WORKERD_DATA_PORT
if [ -n "${STACK_TEST_RUN:-}" ]; then
    CORRAL_RUN=$STACK_TEST_RUN made_run=""
    mkdir -p "$CORRAL_RUN" || exit 1
else
    CORRAL_RUN=$(mktemp -d /tmp/corral-stack.XXXXXX) made_run=1
fi
if [ -n "${STACK_TEST_PORT:-}" ]; then
    CORRAL_PORT=$STACK_TEST_PORT CORRAL_REDIS_PORT=${STACK_TEST_REDIS_PORT:?} \
        CORRAL_WORKERD_DATA_PORT=${STACK_TEST_WORKERD_PORT:?}
else
    read -r CORRAL_PORT CORRAL_REDIS_PORT CORRAL_WORKERD_DATA_PORT < <(free_ports 3)
fi
[ -n "$CORRAL_WORKERD_DATA_PORT" ] || { echo "stack test: no free ports" >&2; exit 1; }
export CORRAL_PROFILE=dev CORRAL_BUILD=${CORRAL_BUILD:-$ROOT/build/bin}
unset CORRAL_WORKERD CORRAL_SUPERVISE CORRAL_GATEWAY_HOSTS CORRAL_REDIS_HA CORRAL_REDIS_CLUSTER
R=$CORRAL_RUN
fails=0 holder="" other="" upper=""
fail() { echo "stack test: FAIL: $*" >&2; fails=$((fails + 1)); }
say() { echo "stack test: $*"; }
cleanup() {
    [ -n "$holder" ] && kill "$holder" 2>/dev/null
    [ -n "$upper" ] && kill -KILL "$upper" 2>/dev/null
    if [ -n "$other" ]; then pkill -P "$other"; kill "$other"; fi 2>/dev/null
    CORRAL_WORKERD=1 conf/stack.sh down >/dev/null 2>&1
    [ -n "$made_run" ] && rm -rf "$R"
    rm -rf "${R}x"
}
trap cleanup EXIT

# Found independently of stack.sh: whatever names the state dir on its command
# line (daemons and their supervisors), Redis by its working dir, and anything
# on the stack's ports.
leftovers() {
    local p
    pgrep -f -- "$R/" | grep -vx "$$" || true
    for p in $(pgrep -x redis-server); do
        [ "$(readlink "/proc/$p/cwd")" = "$R/redis" ] && echo "$p"
    done
    ss -ltnH "( sport = :$CORRAL_PORT or sport = :$((CORRAL_PORT + 1)) or sport = :$CORRAL_REDIS_PORT or sport = :$CORRAL_WORKERD_DATA_PORT )" \
        | grep -q . && echo "a listener on a stack port"
}
check_nothing_running() { # what
    local left
    left=$(leftovers)
    [ -z "$left" ] || fail "$1 left: $left ($(ps -o pid,args -p "$(grep -E '^[0-9]+$' <<<"$left" | paste -sd,)" 2>/dev/null))"
}
pids() { cat "$R"/pids/*.pid "$R/nginx.pid" 2>/dev/null | sort | tr '\n' ' '; }
exports_of() { grep '^export' "$1"; }
key() { sed -n 's/^export E2B_API_KEY=//p' "$R/up1.out"; }
api_answers() {
    curl -sf --max-time 2 -o /dev/null --cacert "$R/tls/ca.crt" -H @- \
        "https://localhost:$CORRAL_PORT/v1/workspace" <<<"X-API-Key: $(key)"
}
health() { curl -sf --max-time 2 -o /dev/null --cacert "$R/tls/ca.crt" "https://localhost:$CORRAL_PORT/health"; }
redis_pong() { [ "$(conf/stack.sh redis-cli ping 2>/dev/null)" = PONG ]; }
registry_challenges() { [ "$(curl -s -o /dev/null --max-time 2 -w '%{http_code}' "http://127.0.0.1:$((CORRAL_PORT + 3))/v2/")" = 401 ]; }
docker_answers() { curl -sf --max-time 3 --unix-socket /var/run/docker.sock http://d/_ping >/dev/null 2>&1; }

listening() { ss -ltnH "( sport = :$1 )" | grep -q .; } # port
# pid runs the program exe (readlink of /proc/PID/exe), its argv[0] argv0 if given
runs() { # pid, exe, [argv0]
    [ "$(readlink "/proc/$1/exe")" = "$2" ] || return 1
    [ -z "${3:-}" ] || [ "$(tr '\0' '\n' <"/proc/$1/cmdline" | head -n 1)" = "$3" ]
}
new_pid() { # pid file, old pid: a live pid other than the old one is there
    local p
    p=$(cat "$1" 2>/dev/null)
    [ -n "$p" ] && [ "$p" != "$2" ] && kill -0 "$p" 2>/dev/null
}
# kill -9 NAME (its pid in FILE): a new process is there within SECS, and
# then READY... succeeds within SECS more. Nothing but its supervisor helps.
kill9_back() { # name, pid file, seconds, ready command...
    local name=$1 f=$2 secs=$3 old t0=$SECONDS
    shift 3
    old=$(cat "$f" 2>/dev/null)
    if [ -z "$old" ] || ! kill -0 "$old" 2>/dev/null; then fail "$name: no live pid in $f"; return 1; fi
    kill -KILL "$old"
    wait_until "$secs" "a new $name" new_pid "$f" "$old" || { fail "$name (pid $old) killed -9: no new one within ${secs}s"; return 1; }
    if [ $# -gt 0 ] && ! wait_until "$secs" "$name ready: $*" "$@"; then fail "$name killed -9: back ($(cat "$f")) but '$*' fails"; return 1; fi
    say "$name killed -9 (pid $old): back as $(cat "$f") in $((SECONDS - t0)) s"
}

# --- up twice, every daemon killed -9, strays, down ------------------------
conf/stack.sh up >"$R/up1.out" 2>&1 || { cat "$R/up1.out"; tail -n 20 "$R"/log/*.log; exit 1; }
first=$(pids)
[ "$(wc -w <<<"$first")" -eq 8 ] || fail "expected 8 pids (redis, registry, 2 api, sched, tunneld, registry-gc, nginx), got: $first"
conf/stack.sh up >"$R/up2.out" 2>&1 || fail "a second up failed: $(cat "$R/up2.out")"
grep -q "already up in $R" "$R/up2.out" || fail "a second up did not say already up"
grep -q "^export E2B_API_KEY=" "$R/up2.out" || fail "a second up printed no exports"
# Issue 34: an up on a running stack changes nothing, the exports included.
[ "$(exports_of "$R/up1.out")" = "$(exports_of "$R/up2.out")" ] || fail "a second up printed other exports (a new workspace?)"
[ "$(pids)" = "$first" ] || fail "a second up changed the pids: $first -> $(pids)"
daemons=$(ps -o comm= -p "$(pgrep -d, -f -- "$R/corral.conf")" | grep -cxE 'corral-(api|sched)')
[ "$daemons" -eq 3 ] || fail "not exactly 2 corral-api + 1 corral-sched after two ups: $daemons"

kill9_back redis "$R/pids/redis.pid" 10 redis_pong
kill9_back corral-api-1 "$R/pids/api-1.pid" 10 test -S "$R/api-1.sock"
kill9_back corral-api-2 "$R/pids/api-2.pid" 10 test -S "$R/api-2.sock"
kill9_back corral-sched "$R/pids/sched.pid" 10
kill9_back corral-tunneld "$R/pids/tunneld.pid" 10 test -S "$R/tunneld.sock"
kill9_back registry "$R/pids/registry.pid" 10 registry_challenges
kill9_back registry-gc "$R/pids/registry-gc.pid" 10
kill9_back nginx "$R/nginx.pid" 10 health
wait_until 10 "the API to answer the key" api_answers || fail "the API does not answer the key after the kills"
conf/stack.sh up >"$R/up3.out" 2>&1 || fail "an up after the kills failed: $(cat "$R/up3.out")"
grep -q "already up in $R" "$R/up3.out" || fail "an up after the kills did not say already up (the stack mended itself)"
[ "$(exports_of "$R/up1.out")" = "$(exports_of "$R/up3.out")" ] || fail "an up after the kills printed other exports"

# A stray of an earlier generation (its pid file overwritten), and a process
# of another state dir whose path has this one's as a prefix.
setsid "$CORRAL_BUILD/corral-sched" -c "$R/corral.conf" >/dev/null 2>&1 </dev/null &
stray=$!
mkdir -p "${R}x"
(exec -a corral-sched bash -c 'sleep 600; :' _ -c "${R}x/corral.conf") >/dev/null 2>&1 </dev/null &
other=$!
wait_until 10 "the stray corral-sched to run" runs "$stray" "$(readlink -f "$CORRAL_BUILD/corral-sched")" \
    || fail "the stray corral-sched did not start"
wait_until 10 "the other state dir's process to run" runs "$other" "$(readlink -f "$(command -v bash)")" corral-sched \
    || fail "the other state dir's process did not start"
conf/stack.sh down >/dev/null 2>&1 || fail "down failed"
check_nothing_running "down"
kill -0 "$stray" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$stray/stat")" != Z ] && fail "down left the stray corral-sched"
kill -0 "$other" 2>/dev/null || fail "down stopped another state dir's process"

# --- failed ups ------------------------------------------------------------
# A failed up: nginx's port is taken.
node -e "require('net').createServer().listen($CORRAL_PORT, '127.0.0.1')" &
holder=$!
wait_until 10 "a holder of port $CORRAL_PORT" listening "$CORRAL_PORT" || fail "nothing holds port $CORRAL_PORT"
if conf/stack.sh up >"$R/up3.out" 2>&1; then fail "up succeeded with its port taken"; fi
grep -q "up failed: stopping what it started" "$R/up3.out" || fail "a failed up did not say so: $(cat "$R/up3.out")"
kill "$holder"; wait "$holder" 2>/dev/null; holder=""
check_nothing_running "a failed up"

# A failed scaled-out up (decision 0059): its gateway host's namespace and
# the bridge go too, not only its processes.
node -e "require('net').createServer().listen($CORRAL_PORT, '127.0.0.1')" &
holder=$!
wait_until 10 "a holder of port $CORRAL_PORT" listening "$CORRAL_PORT" || fail "nothing holds port $CORRAL_PORT"
if CORRAL_GATEWAY_HOSTS=1 CORRAL_HOSTS_NET=10.235.0 conf/stack.sh up >"$R/up4.out" 2>&1; then
    fail "a scaled-out up succeeded with its port taken"
fi
grep -q "up failed: stopping what it started" "$R/up4.out" || fail "a failed scaled-out up did not say so: $(cat "$R/up4.out")"
kill "$holder"; wait "$holder" 2>/dev/null; holder=""
check_nothing_running "a failed scaled-out up"
ip netns list | grep -q "corral-$CORRAL_PORT-gw" && fail "a failed scaled-out up left its network namespace"
ip link show "cgw$CORRAL_PORT" >/dev/null 2>&1 && fail "a failed scaled-out up left its bridge cgw$CORRAL_PORT"

# --- with workerd and dockerd ----------------------------------------------
export CORRAL_WORKERD=1
fs_dir=$(bash tests/lib/docker.sh fs-dir)
# What was there before: another's, never this stack's to remove.
docker_before="" egress_before="" table_before="" mount_before=""
docker_answers && docker_before=1
[ -n "$docker_before" ] && docker network inspect corral-egress >/dev/null 2>&1 && egress_before=1
nft list table inet corral >/dev/null 2>&1 && table_before=1
mountpoint -q "$fs_dir" && mount_before=1
say "before (1: there): dockerd answers '$docker_before', corral-egress '$egress_before', table inet corral '$table_before', $fs_dir mounted '$mount_before'"

worker_id() { sed -n 's/^worker_id = \([0-9a-f]*\)$/\1/p' "$R/workerd-state/worker" 2>/dev/null; }
enrolled_since() { tail -c +$(($1 + 1)) "$R/log/workerd.log" | grep -q "enrolled as worker"; }

# After a down of a stack with workerd: nothing of it, and nothing it made.
check_nothing_left() { # what, worker id, dockerd pid ("" if not the stack's)
    local what=$1 wid=$2 dpid=$3 others
    check_nothing_running "$what"
    [ -z "$(ls -A "$R/owned" 2>/dev/null)" ] || fail "$what left records in $R/owned: $(ls "$R/owned")"
    if [ -n "$dpid" ]; then
        kill -0 "$dpid" 2>/dev/null && fail "$what left the dockerd it started (pid $dpid)"
        docker_answers && fail "$what: a dockerd still answers after the stack's was stopped"
        [ -z "$mount_before" ] && mountpoint -q "$fs_dir" && fail "$what left $fs_dir mounted"
    elif [ -n "$docker_before" ] && ! docker_answers; then
        fail "$what: the dockerd that was there before no longer answers"
    fi
    if docker_answers && [ -n "$wid" ]; then
        [ -z "$(docker ps -aq --filter "label=corral.worker=$wid")" ] || fail "$what left worker $wid's containers"
        [ -z "$(docker network ls -q --filter "label=corral.worker=$wid")" ] || fail "$what left worker $wid's networks"
    fi
    others=$(pgrep -x workerd | paste -sd' ')
    if [ -n "$others" ]; then
        say "$what: another workerd runs here (pids $others): corral-egress and table inet corral are its too, not checked"
        return 0
    fi
    if [ -z "$egress_before" ] && docker_answers && docker network inspect corral-egress >/dev/null 2>&1; then
        fail "$what left the corral-egress network"
    fi
    [ -z "$table_before" ] && nft list table inet corral >/dev/null 2>&1 && fail "$what left table inet corral"
    return 0
}

# down, which says what it could not remove (after dockerd stopped, it cannot be asked).
down_checked() { # what
    conf/stack.sh down >"$R/down.out" 2>&1 || fail "$1 failed: $(cat "$R/down.out")"
    grep "could not" "$R/down.out" && fail "$1 could not remove something"
    return 0
}

if ! conf/stack.sh up >"$R/up5.out" 2>&1; then
    fail "up with workerd failed: $(tail -n 5 "$R/up5.out")"
    tail -n 20 "$R"/log/workerd.log "$R"/log/images.log 2>/dev/null
else
    conf/stack.sh up >"$R/up6.out" 2>&1 || fail "a second up with workerd failed: $(cat "$R/up6.out")"
    grep -q "already up in $R" "$R/up6.out" || fail "a second up with workerd did not say already up"
    [ "$(exports_of "$R/up5.out")" = "$(exports_of "$R/up6.out")" ] || fail "a second up with workerd printed other exports"
    wid=$(worker_id)
    dpid=""
    if [ -n "$docker_before" ]; then
        [ -e "$R/owned/dockerd" ] && fail "the stack took for its own the dockerd that answered before it"
    else
        [ -e "$R/owned/dockerd" ] || fail "the stack started dockerd but did not record it"
        dpid=$(cat "$R/pids/dockerd.pid" 2>/dev/null)
    fi
    from=$(stat -c %s "$R/log/workerd.log")
    kill9_back workerd "$R/pids/workerd.pid" 10 && { wait_until 90 "workerd to enrol" enrolled_since "$from" || fail "workerd killed -9: back but not enrolled within 90 s"; }
    [ "$(worker_id)" = "$wid" ] || fail "workerd came back as another worker: $wid -> $(worker_id)"
    if [ -n "$dpid" ]; then
        # Only a dockerd this stack started: the one here may be everyone's.
        kill9_back dockerd "$R/pids/dockerd.pid" 60 docker_answers
        dpid=$(cat "$R/pids/dockerd.pid" 2>/dev/null)
    else
        say "dockerd answered before the stack: not the stack's, not killed (the path where the stack starts it runs where none answers, as in CI)"
    fi
    down_checked "down with workerd"
    check_nothing_left "down after two ups with workerd" "$wid" "$dpid"
fi

# An up killed -9 half-way (while its workerd enrols): `down` still finds all.
conf/stack.sh up >"$R/up7.out" 2>&1 &
upper=$!
wait_until 300 "the up to start workerd" test -s "$R/supervise/workerd.pid" || fail "the up to be killed did not get to workerd: $(tail -n 5 "$R/up7.out")"
dpid=""
[ -e "$R/owned/dockerd" ] && dpid=$(cat "$R/pids/dockerd.pid" 2>/dev/null)
kill -KILL "$upper"; wait "$upper" 2>/dev/null; upper=""
say "up killed -9 at workerd's start${dpid:+ (its dockerd: pid $dpid)}"
wid=$(worker_id)
down_checked "down after a killed up"
check_nothing_left "down after an up killed -9" "$wid" "$dpid"

[ "$fails" -eq 0 ] && say "ok (up twice, kill -9 of every daemon, strays, failed ups, with workerd: up twice and a killed up, then nothing left)"
[ "$fails" -eq 0 ]
