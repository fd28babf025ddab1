#!/usr/bin/env bash
# conf/redis-ha.sh RUN PORT [ADDR]: writes what a Redis replica and three sentinels
# need to stand beside the stack's Redis primary on PORT (decision 0058), and
# prints the lines corral.conf gains. conf/stack.sh starts them when
# CORRAL_REDIS_HA=1:
#   replica    PORT+1, replicating the primary as corral-admin
#   sentinels  PORT+2, PORT+3, PORT+4, monitoring it as "corral", quorum 2,
#              down after 1 s (CORRAL_SENTINEL_DOWN_AFTER_MS: a failover slower
#              than a lease, tests/failover/workerd.sh); clients and each other
#              log in with RUN/redis-sentinel-password
# ADDR (default 127.0.0.1) is where all of them are found: with gateway hosts
# in network namespaces, the bridge's address (conf/gateway-hosts.sh).
# Passwords go only into 0600 files, never into an argv.
set -euo pipefail
RUN=${1:?usage: redis-ha.sh RUN PORT}
PORT=${2:?usage: redis-ha.sh RUN PORT}
ADDR=${3:-127.0.0.1}
BIND="127.0.0.1 ${ADDR#127.0.0.1}"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
umask 077
[ -f "$RUN/redis-sentinel-password" ] || openssl rand -hex 32 > "$RUN/redis-sentinel-password"
admin=$(cat "$RUN/redis-admin-password")
spw=$(cat "$RUN/redis-sentinel-password")

mkdir -p "$RUN/redis-replica"
cat > "$RUN/redis-replica.conf" <<CONF
include $ROOT/conf/redis.conf
port $((PORT + 1))
bind $BIND
dir $RUN/redis-replica
aclfile $RUN/redis-users.acl
replicaof $ADDR $PORT
masteruser corral-admin
masterauth $admin
CONF

list=""
for i in 1 2 3; do
    mkdir -p "$RUN/sentinel-$i"
    # Sentinel rewrites its file as it learns the topology: its own, 0600.
    cat > "$RUN/sentinel-$i.conf" <<CONF
port $((PORT + 1 + i))
bind $BIND
dir $RUN/sentinel-$i
requirepass $spw
sentinel sentinel-pass $spw
sentinel monitor corral $ADDR $PORT 2
sentinel auth-user corral corral-admin
sentinel auth-pass corral $admin
sentinel down-after-milliseconds corral ${CORRAL_SENTINEL_DOWN_AFTER_MS:-1000}
sentinel failover-timeout corral 5000
CONF
    list="$list${list:+,}$ADDR:$((PORT + 1 + i))"
done
echo "redis_sentinels = $list"
echo "redis_master_name = corral"
echo "redis_sentinel_password_file = $RUN/redis-sentinel-password"
