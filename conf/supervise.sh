#!/usr/bin/env bash
# conf/supervise.sh: keeps one daemon of the `make up` stack running, as the
# systemd units keep it in production (issue 34 point 4, decision 0072).
#
#   supervise.sh [-p PIDFILE] [-r always|on-failure] [-d DELAY] [-m MAX]
#                [-s SIGNAL] [-t TIMEOUT] SUPDIR/NAME -- COMMAND...
#
# Runs COMMAND in a process group of its own (setsid) and runs it again when
# it exits: Restart=always, or on-failure (a clean exit, status 0, ends the
# supervision, as `nginx -s quit` does). The first restart waits DELAY
# seconds (the unit's RestartSec=), each quick one after it twice as long,
# up to MAX; a run that lasted MAX seconds resets the delay. It never gives
# up (the units' StartLimitIntervalSec=0). After each exit the child's
# process group is killed: what a daemon killed by -9 left behind (nginx's
# workers keep the listening sockets and would make the next master's bind
# fail) goes with it.
#
# Stopping: SIGTERM (or SIGINT) stops the daemon with SIGNAL (default TERM),
# then SIGKILL after TIMEOUT seconds (the units' TimeoutStopSec=), and exits
# without restarting it; SIGUSR1 does the same with SIGKILL at once (a
# crash on purpose, `conf/stack.sh kill-api N`). A stop that arrives while
# the daemon is down for its delay ends the supervision there. The caller
# writes SUPDIR/NAME.pid (this process's pid) before it starts; the child's pid goes to
# PIDFILE at each start. Both are removed at the exit. The supervisor's own
# output and the daemon's go where its stdout goes (the daemon's log).
set -uo pipefail

pidfile="" restart=always delay=1 max=30 stopsig=TERM timeout=10
while getopts p:r:d:m:s:t: opt; do
    case "$opt" in
    p) pidfile=$OPTARG ;;
    r) restart=$OPTARG ;;
    d) delay=$OPTARG ;;
    m) max=$OPTARG ;;
    s) stopsig=$OPTARG ;;
    t) timeout=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
name=${1:?supervise.sh: SUPDIR/NAME missing}
shift
[ "${1:-}" = -- ] && shift
[ $# -ge 1 ] || { echo "supervise.sh: no command" >&2; exit 2; }
case "$restart" in always | on-failure) ;; *) echo "supervise.sh: -r always|on-failure" >&2; exit 2 ;; esac

say() { echo "supervise[$$] ${name##*/}: $*"; }

# child is set only while the daemon runs (never a pid that may be reused).
child="" stopping="" sleeper=""
# shellcheck disable=SC2317 # called by the traps
stop() { # the signal the daemon gets
    stopping=$1
    [ -n "$child" ] && kill "-$1" "$child" 2>/dev/null
    [ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
}
trap 'stop "$stopsig"' TERM INT
trap 'stop KILL' USR1

gone() { ! kill -0 "$1" 2>/dev/null; }

# Waits for the child; a stop that arrives meanwhile interrupts `wait` (it
# returns > 128 while the child still runs): then wait TIMEOUT more, SIGKILL.
wait_child() {
    local rc i
    while :; do
        wait "$child"; rc=$?
        gone "$child" && break
        if [ -n "$stopping" ]; then
            for ((i = 0; i < timeout * 10; i++)); do gone "$child" && break; sleep 0.1; done
            gone "$child" || { say "still running after ${timeout}s: SIGKILL"; kill -KILL "$child" 2>/dev/null; }
        fi
    done
    return "$rc"
}

base=$delay
while [ -z "$stopping" ]; do
    started=$SECONDS
    setsid "$@" </dev/null &
    child=$!
    # A stop that came before $child was known is passed on now.
    [ -n "$stopping" ] && kill "-$stopping" "$child" 2>/dev/null
    [ -n "$pidfile" ] && echo "$child" >"$pidfile"
    say "started (pid $child)"
    wait_child; rc=$?
    # Whatever the daemon left in its process group (it is the leader).
    kill -KILL -- "-$child" 2>/dev/null
    ran=$((SECONDS - started)) old=$child child=""
    [ -n "$pidfile" ] && [ "$(cat "$pidfile" 2>/dev/null)" = "$old" ] && rm -f "$pidfile"
    [ -n "$stopping" ] && { say "stopped (SIG$stopping, status $rc)"; break; }
    if [ "$restart" = on-failure ] && [ "$rc" -eq 0 ]; then
        say "exited cleanly: not restarted"
        break
    fi
    [ "$ran" -ge "$max" ] && delay=$base
    say "exited (status $rc) after ${ran}s: restarting in ${delay}s"
    sleep "$delay" &
    sleeper=$!
    [ -n "$stopping" ] && kill "$sleeper" 2>/dev/null
    wait "$sleeper" 2>/dev/null
    sleeper=""
    [ -n "$stopping" ] && say "stopped while waiting to restart"
    delay=$((delay * 2 > max ? max : delay * 2))
done
sup="$name.pid"
[ "$(cat "$sup" 2>/dev/null)" = "$$" ] && rm -f "$sup"
exit 0
