#!/usr/bin/env bash
# tests/lib/docker.sh: a dockerd for the tests, with runsc registered.
#
#   docker.sh start         install docker.io/runsc if missing, register runsc,
#                           start dockerd in the background unless it answers
#   docker.sh stop          stop dockerd, only if `start` started it
#   docker.sh restart       stop dockerd (ours, or the one in /var/run/docker.pid) and
#                           start it again: tests of workerd surviving a dockerd restart
#   docker.sh ensure-image  build corral/base when missing (tests/lib/images.sh)
#
# There is no systemd here: dockerd runs in the background, logs to a file, and
# a pid file under $CORRAL_RUN remembers that we started it. Loops are bounded.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Not $CORRAL_RUN: that is the control plane's, and changes with every test run.
RUN_DIR=${CORRAL_DOCKER_RUN:-$(cd "$HERE/../.." && pwd)/run}
PID_FILE=$RUN_DIR/dockerd.pid
LOG_FILE=$RUN_DIR/dockerd.log
SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
DAEMON_JSON=/etc/docker/daemon.json

die() { echo "docker.sh: $*" >&2; exit 1; }

install_missing() {
    local need=()
    command -v dockerd >/dev/null || need+=(docker.io)
    command -v runsc >/dev/null || need+=(runsc)
    command -v debootstrap >/dev/null || need+=(debootstrap)
    [ ${#need[@]} -eq 0 ] && return 0
    echo "docker.sh: installing ${need[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" >&2 ||
        die "apt-get install ${need[*]} failed"
}

# runsc refuses to start here without host networking, hence runtimeArgs.
register_runsc() {
    local want
    want='{"runtimes":{"runsc":{"path":"'"$(command -v runsc)"'","runtimeArgs":["--network=host"]}}}'
    mkdir -p /etc/docker
    if [ -f "$DAEMON_JSON" ] && grep -q '"runsc"' "$DAEMON_JSON"; then
        return 0
    fi
    if [ -s "$DAEMON_JSON" ]; then
        command -v python3 >/dev/null || die "$DAEMON_JSON exists; need python3 to merge runsc into it"
        python3 - "$DAEMON_JSON" "$want" <<'PY'
import json, sys
path, want = sys.argv[1], json.loads(sys.argv[2])
cur = json.load(open(path))
cur.setdefault("runtimes", {}).update(want["runtimes"])
json.dump(cur, open(path, "w"), indent=2)
PY
    else
        printf '%s\n' "$want" >"$DAEMON_JSON"
    fi
}

answers() {
    curl -sf --max-time 3 --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1
}

wait_socket() {
    local i
    for i in $(seq 1 150); do
        answers && return 0
        sleep 0.2
    done
    return 1
}

start() {
    install_missing
    register_runsc
    mkdir -p "$RUN_DIR"
    if answers; then
        echo "docker.sh: dockerd already answers on $SOCK" >&2
        return 0
    fi
    # A stale pid file from a killed run: forget it.
    rm -f "$PID_FILE"
    setsid dockerd --host "unix://$SOCK" >>"$LOG_FILE" 2>&1 </dev/null &
    echo $! >"$PID_FILE"
    wait_socket || die "dockerd did not answer on $SOCK within 30 s (see $LOG_FILE)"
    echo "docker.sh: dockerd started (pid $(cat "$PID_FILE"), log $LOG_FILE)" >&2
}

stop() {
    [ -f "$PID_FILE" ] || { echo "docker.sh: dockerd not started by us; leaving it" >&2; return 0; }
    local pid i
    pid=$(cat "$PID_FILE")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for i in $(seq 1 150); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$PID_FILE"
    echo "docker.sh: dockerd stopped" >&2
}

restart() {
    if [ ! -f "$PID_FILE" ] && [ -f /var/run/docker.pid ]; then
        cp /var/run/docker.pid "$PID_FILE"
    fi
    [ -f "$PID_FILE" ] || die "restart: no pid file for the running dockerd"
    stop
    start
}

case "${1:-}" in
start) start ;;
restart) restart ;;
stop) stop ;;
ensure-image) answers || die "dockerd does not answer on $SOCK"; bash "$HERE/images.sh" ;;
*) die "usage: docker.sh start|stop|ensure-image" ;;
esac
