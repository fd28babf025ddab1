#!/usr/bin/env bash
# tests/stack/updown.sh: conf/stack.sh up and down (issue 9 point 9), without
# workerd or dockerd, on a state dir and ports of its own:
#   - a second `up` says "already up", starts nothing (the same pids) and prints
#     the same exports again (no new workspace, the owner key kept);
#   - `down` stops every process of the state dir, a stray of an earlier
#     generation too, and no process of another state dir (a path prefix of it);
#   - an `up` that fails (nginx's port held by this test) leaves nothing running,
#     and a scaled-out one leaves no network namespace or bridge.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
export CORRAL_RUN; CORRAL_RUN=$(mktemp -d /tmp/corral-stack.XXXXXX)
# shellcheck source=../lib/ports.sh
. "$ROOT/tests/lib/ports.sh"
read -r CORRAL_PORT CORRAL_REDIS_PORT < <(free_ports 2)
[ -n "$CORRAL_REDIS_PORT" ] || { echo "stack test: no free ports" >&2; exit 1; }
export CORRAL_PORT CORRAL_REDIS_PORT
export CORRAL_PROFILE=dev CORRAL_BUILD=${CORRAL_BUILD:-$ROOT/build/bin}
unset CORRAL_WORKERD
fails=0 holder="" other=""
fail() { echo "stack test: FAIL: $*" >&2; fails=$((fails + 1)); }
cleanup() {
    [ -n "$holder" ] && kill "$holder" 2>/dev/null
    if [ -n "$other" ]; then pkill -P "$other"; kill "$other"; fi 2>/dev/null
    conf/stack.sh down >/dev/null 2>&1
    rm -rf "$CORRAL_RUN" "${CORRAL_RUN}x"
}
trap cleanup EXIT

# Found independently of stack.sh: whatever names the state dir on its command
# line, Redis by its working dir, and anything on the stack's ports.
leftovers() {
    local p
    pgrep -f -- "$CORRAL_RUN/" | grep -vx "$$" || true
    for p in $(pgrep -x redis-server); do
        [ "$(readlink "/proc/$p/cwd")" = "$CORRAL_RUN/redis" ] && echo "$p"
    done
    ss -ltnH "( sport = :$CORRAL_PORT or sport = :$((CORRAL_PORT + 1)) or sport = :$CORRAL_REDIS_PORT )" \
        | grep -q . && echo "a listener on a stack port"
}
pids() { cat "$CORRAL_RUN"/pids/*.pid "$CORRAL_RUN/nginx.pid" 2>/dev/null | sort | tr '\n' ' '; }

conf/stack.sh up >"$CORRAL_RUN/up1.out" 2>&1 || { cat "$CORRAL_RUN/up1.out"; tail -n 20 "$CORRAL_RUN"/log/*.log; exit 1; }
first=$(pids)
[ "$(wc -w <<<"$first")" -eq 5 ] || fail "expected 5 pids (redis, 2 api, sched, nginx), got: $first"
conf/stack.sh up >"$CORRAL_RUN/up2.out" 2>&1 || fail "a second up failed: $(cat "$CORRAL_RUN/up2.out")"
grep -q "already up in $CORRAL_RUN" "$CORRAL_RUN/up2.out" || fail "a second up did not say already up"
grep -q "^export E2B_API_KEY=" "$CORRAL_RUN/up2.out" || fail "a second up printed no exports"
# Issue 34: an up on a running stack changes nothing, the exports included.
[ "$(grep '^export' "$CORRAL_RUN/up1.out")" = "$(grep '^export' "$CORRAL_RUN/up2.out")" ] \
    || fail "a second up printed other exports (a new workspace?)"
[ "$(pids)" = "$first" ] || fail "a second up changed the pids: $first -> $(pids)"
[ "$(pgrep -c -f -- "$CORRAL_RUN/corral.conf")" -eq 3 ] || fail "not exactly 2 corral-api + 1 corral-sched after two ups"

# A stray of an earlier generation (its pid file overwritten), and a process
# of another state dir whose path has this one's as a prefix.
setsid "$CORRAL_BUILD/corral-sched" -c "$CORRAL_RUN/corral.conf" >/dev/null 2>&1 </dev/null &
stray=$!
mkdir -p "${CORRAL_RUN}x"
(exec -a corral-sched bash -c 'sleep 600; :' _ -c "${CORRAL_RUN}x/corral.conf") >/dev/null 2>&1 </dev/null &
other=$!
sleep 0.3
conf/stack.sh down >/dev/null 2>&1 || fail "down failed"
left=$(leftovers)
[ -z "$left" ] || fail "down left: $left ($(ps -o pid,args -p "$(tr '\n' ',' <<<"$left" | sed 's/,$//')" 2>/dev/null))"
kill -0 "$stray" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$stray/stat")" != Z ] && fail "down left the stray corral-sched"
kill -0 "$other" 2>/dev/null || fail "down stopped another state dir's process"

# A failed up: nginx's port is taken.
node -e "require('net').createServer().listen($CORRAL_PORT, '127.0.0.1')" &
holder=$!
sleep 0.5
if conf/stack.sh up >"$CORRAL_RUN/up3.out" 2>&1; then fail "up succeeded with its port taken"; fi
grep -q "up failed: stopping what it started" "$CORRAL_RUN/up3.out" || fail "a failed up did not say so: $(cat "$CORRAL_RUN/up3.out")"
kill "$holder"; wait "$holder" 2>/dev/null; holder=""
left=$(leftovers)
[ -z "$left" ] || fail "a failed up left: $left"

# A failed scaled-out up (decision 0059): its gateway host's namespace and
# the bridge go too, not only its processes.
node -e "require('net').createServer().listen($CORRAL_PORT, '127.0.0.1')" &
holder=$!
sleep 0.5
if CORRAL_GATEWAY_HOSTS=1 CORRAL_HOSTS_NET=10.235.0 conf/stack.sh up >"$CORRAL_RUN/up4.out" 2>&1; then
    fail "a scaled-out up succeeded with its port taken"
fi
grep -q "up failed: stopping what it started" "$CORRAL_RUN/up4.out" || fail "a failed scaled-out up did not say so: $(cat "$CORRAL_RUN/up4.out")"
kill "$holder"; wait "$holder" 2>/dev/null; holder=""
left=$(leftovers)
[ -z "$left" ] || fail "a failed scaled-out up left: $left"
ip netns list | grep -q "corral-$CORRAL_PORT-gw" && fail "a failed scaled-out up left its network namespace"
ip link show "cgw$CORRAL_PORT" >/dev/null 2>&1 && fail "a failed scaled-out up left its bridge cgw$CORRAL_PORT"

[ "$fails" -eq 0 ] && echo "stack test: ok (up twice, strays, failed up, failed scaled-out up)"
[ "$fails" -eq 0 ]
