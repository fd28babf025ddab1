#!/usr/bin/env bash
# tests/lib/docker.sh: a dockerd for the tests, with runsc registered.
#
#   docker.sh start         install docker.io/runsc if missing, register runsc,
#                           start dockerd in the background unless it answers
#   docker.sh stop          stop dockerd, only if `start` started it
#   docker.sh restart       stop dockerd (ours, or the one in /var/run/docker.pid) and
#                           start it again: tests of workerd surviving a dockerd restart
#   docker.sh ensure-image  build corral/base when missing (tests/lib/images.sh)
#   docker.sh run           the same dockerd as `start`, in the foreground (exec), for
#                           a supervisor: conf/stack.sh's `make up` (decision 0072)
#   docker.sh running       exit 0 if the dockerd `start` started still runs
#   docker.sh fs-dir        print where the btrfs data root is mounted
#
# There is no systemd here: dockerd runs in the background, logs to a file, and
# a pid file under $CORRAL_RUN remembers that we started it. Loops are bounded.
#
# What Corral needs of dockerd (docs/decisions/0023-network-per-sandbox.md):
#   - address pools for thousands of per-sandbox networks (default-address-pools
#     in daemon.json: Docker's own defaults allow about 30 bridge networks);
#   - no iptables management (--iptables=false on the dockerd started here):
#     networks are 10x cheaper, and workerd's own table does the walling and NAT;
#   - storage that can limit a container's writable layer (StorageOpt size):
#     overlay2 can only on xfs with project quotas, which kernels without quota
#     support (this one) cannot mount, so the dockerd we start keeps its data
#     on a btrfs file system in a sparse file, with the btrfs storage driver
#     and simple quotas (btrfs's own, no quota support needed): $CORRAL_DOCKER_FS,
#     default /var/lib/corral-docker.btrfs.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Not $CORRAL_RUN: that is the control plane's, and changes with every test run.
RUN_DIR=${CORRAL_DOCKER_RUN:-$(cd "$HERE/../.." && pwd)/run}
PID_FILE=$RUN_DIR/dockerd.pid
LOG_FILE=$RUN_DIR/dockerd.log
SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
DAEMON_JSON=/etc/docker/daemon.json
FS_IMG=${CORRAL_DOCKER_FS:-/var/lib/corral-docker.btrfs}
FS_DIR=${FS_IMG%.btrfs}
FS_SIZE=${CORRAL_DOCKER_FS_SIZE:-64G}
# 16,384 networks of 16 addresses; override when 10.200.0.0/14 is in use nearby.
POOL_BASE=${CORRAL_DOCKER_POOL:-10.200.0.0/14}

die() { echo "docker.sh: $*" >&2; exit 1; }

install_missing() {
    local need=()
    command -v dockerd >/dev/null || need+=(docker.io)
    command -v runsc >/dev/null || need+=(runsc)
    command -v debootstrap >/dev/null || need+=(debootstrap)
    command -v mkfs.btrfs >/dev/null || need+=(btrfs-progs)
    command -v nft >/dev/null || need+=(nftables)
    [ ${#need[@]} -eq 0 ] && return 0
    echo "docker.sh: installing ${need[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" >&2 ||
        die "apt-get install ${need[*]} failed"
}

# runsc refuses to start here without host networking, hence runtimeArgs.
# Both settings are merged into an existing daemon.json, never replacing it.
configure_daemon() {
    local want
    want='{"runtimes":{"runsc":{"path":"'"$(command -v runsc)"'","runtimeArgs":["--network=host"]}},'
    want+='"default-address-pools":[{"base":"'"$POOL_BASE"'","size":28}]}'
    mkdir -p /etc/docker
    [ -s "$DAEMON_JSON" ] || echo '{}' >"$DAEMON_JSON"
    command -v python3 >/dev/null || die "need python3 to merge settings into $DAEMON_JSON"
    python3 - "$DAEMON_JSON" "$want" <<'PY'
import json, sys
path, want = sys.argv[1], json.loads(sys.argv[2])
cur = json.load(open(path))
new = dict(cur)
new.setdefault("runtimes", {}).update(want["runtimes"])
new.setdefault("default-address-pools", want["default-address-pools"])
if new != cur:
    json.dump(new, open(path, "w"), indent=2)
PY
}

# Without its iptables management a network costs dockerd 20 ms instead of 200
# (workerd's nftables table walls and masquerades sandboxes itself: decision
# 0023). A dockerd that ran here before with it on left the FORWARD policy at
# DROP, which would now drop every sandbox's traffic: that policy is Docker's,
# reset it; nothing else of the host's firewall is touched.
forward_policy_left_by_docker() {
    local rules
    command -v iptables >/dev/null || return 0
    rules=$(iptables -S 2>/dev/null) || return 0
    if grep -q '^-P FORWARD DROP' <<<"$rules" && grep -q '^-N DOCKER-ISOLATION-STAGE-1' <<<"$rules"; then
        echo "docker.sh: resetting the FORWARD DROP policy an earlier dockerd left" >&2
        iptables -P FORWARD ACCEPT
    fi
}

# A btrfs file system for dockerd's data, when we can make one; prints the
# dockerd flags to use it (nothing: dockerd's defaults, and no disk limits).
btrfs_data_root() {
    if ! mountpoint -q "$FS_DIR" 2>/dev/null; then
        if [ ! -s "$FS_IMG" ]; then
            truncate -s "$FS_SIZE" "$FS_IMG.part" && mkfs.btrfs -q "$FS_IMG.part" >/dev/null 2>&1 &&
                mv "$FS_IMG.part" "$FS_IMG" || { rm -f "$FS_IMG.part"; return 0; }
        fi
        mkdir -p "$FS_DIR"
        mount -o loop "$FS_IMG" "$FS_DIR" >&2 || return 0
    fi
    # Simple quotas (Linux 6.7+): full qgroups make every subvolume deletion
    # cost seconds of btrfs-cleaner CPU (and a container create 10 s once
    # many qgroups pile up); simple ones account only new extents. Debian 12's
    # btrfs-progs cannot turn them on, so the ioctl does. dockerd's btrfs
    # driver turns on full qgroups if it finds quotas off: found so, they are
    # switched back (dockerd is not running here, nothing holds a limit).
    local mode; mode=$(cat "/sys/fs/btrfs/$(findmnt -n -o UUID --target "$FS_DIR")/qgroups/mode" 2>/dev/null)
    python3 - "$FS_DIR" "$mode" <<'PY' >&2 || return 0
import fcntl, os, struct, sys
BTRFS_IOC_QUOTA_CTL, DISABLE, ENABLE_SIMPLE_QUOTA = 0xC0109428, 2, 4
fd = os.open(sys.argv[1], os.O_RDONLY)
if sys.argv[2] == 'qgroup':
    print('docker.sh: full qgroups found on the data root: switching to simple quotas')
    fcntl.ioctl(fd, BTRFS_IOC_QUOTA_CTL, struct.pack('QQ', DISABLE, 0))
fcntl.ioctl(fd, BTRFS_IOC_QUOTA_CTL, struct.pack('QQ', ENABLE_SIMPLE_QUOTA, 0))
PY
    echo "--data-root $FS_DIR --storage-driver btrfs"
}

answers() {
    curl -sf --max-time 3 --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1
}

wait_socket() {
    local i
    for i in $(seq 1 150); do
        answers && return 0
        # sleep: between tries of this loop (150 of them).
        sleep 0.2
    done
    return 1
}

# The flags of the dockerd started here; its data root is mounted first.
dockerd_args() {
    local args
    args=$(btrfs_data_root)
    [ -n "$args" ] || echo "docker.sh: no btrfs for dockerd's data: sandboxes get no disk limit" >&2
    args+=" --iptables=false"
    # With address pools set, Docker would carve docker0 out of them (16
    # addresses): keep the usual /16 for containers that are not sandboxes.
    grep -q '"bip"' "$DAEMON_JSON" 2>/dev/null || args+=" --bip 172.17.0.1/16"
    forward_policy_left_by_docker
    echo "$args"
}

start() {
    install_missing
    configure_daemon
    mkdir -p "$RUN_DIR"
    if answers; then
        echo "docker.sh: dockerd already answers on $SOCK" >&2
        return 0
    fi
    # A stale pid file from a killed run: forget it.
    rm -f "$PID_FILE"
    local args
    args=$(dockerd_args)
    # shellcheck disable=SC2086 # the flags are words
    setsid dockerd --host "unix://$SOCK" $args >>"$LOG_FILE" 2>&1 </dev/null &
    echo $! >"$PID_FILE"
    if ! wait_socket && ! recover_network_store "$args"; then
        die "dockerd did not answer on $SOCK within 30 s (see $LOG_FILE)"
    fi
    echo "docker.sh: dockerd started (pid $(cat "$PID_FILE"), log $LOG_FILE)" >&2
}

# `start`'s dockerd in the foreground: this process becomes dockerd, so that
# a supervisor sees it exit and starts it again (conf/supervise.sh). The
# supervisor's pid file stands for $PID_FILE; its output is the log.
run() {
    install_missing
    configure_daemon
    answers && die "a dockerd already answers on $SOCK: not starting another"
    local args
    args=$(dockerd_args)
    # DOCKERD_LOG: the supervisor's log of this dockerd (its stderr). A start
    # since the last mark that panicked on the network store (a dockerd
    # killed -9 while making a network, as the stack test does) would panic
    # at every start: the store is set aside once, as `start` does.
    if [ -n "${DOCKERD_LOG:-}" ] && [ -f "$DOCKERD_LOG" ] &&
        awk '/^docker.sh: run: starting dockerd/ { hit = 0 } /reservePools/ { hit = 1 } END { exit !hit }' "$DOCKERD_LOG"; then
        move_network_store "$args"
    fi
    echo "docker.sh: run: starting dockerd" >&2
    # shellcheck disable=SC2086 # the flags are words
    exec dockerd --host "unix://$SOCK" $args
}

# Docker 20.10 can leave a network without its address pool in its store when it
# is stopped in the middle of creating one, and then panics at every start
# (libnetwork reservePools: index out of range). The store holds only networks,
# which workerd makes again on demand: set it aside once and start again.
move_network_store() { # dockerd's args
    local store root
    root=$(sed -nE 's/.*--data-root ([^ ]+).*/\1/p' <<<"$1"); root=${root:-/var/lib/docker}
    store=$root/network/files/local-kv.db
    [ -f "$store" ] || return 1
    echo "docker.sh: dockerd's network store is damaged; moving it to $store.damaged" >&2
    mv "$store" "$store.damaged"
}
recover_network_store() {
    grep -q 'reservePools' "$LOG_FILE" 2>/dev/null || return 1
    move_network_store "$1" || return 1
    # shellcheck disable=SC2086 # the flags are words
    setsid dockerd --host "unix://$SOCK" $1 >>"$LOG_FILE" 2>&1 </dev/null &
    echo $! >"$PID_FILE"
    wait_socket
}

stop() {
    [ -f "$PID_FILE" ] || { echo "docker.sh: dockerd not started by us; leaving it" >&2; return 0; }
    local pid i
    pid=$(cat "$PID_FILE")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for i in $(seq 1 150); do
            kill -0 "$pid" 2>/dev/null || break
            # sleep: between looks of this loop (150 of them), then SIGKILL.
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
run) run ;;
running) [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null ;;
fs-dir) echo "$FS_DIR" ;;
ensure-image) answers || die "dockerd does not answer on $SOCK"; bash "$HERE/images.sh" ;;
*) die "usage: docker.sh start|stop|restart|run|running|fs-dir|ensure-image" ;;
esac
