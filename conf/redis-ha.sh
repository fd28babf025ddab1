#!/usr/bin/env bash
# conf/redis-ha.sh RUN PORT: writes what a Redis replica and three sentinels
# need to stand beside the stack's Redis primary on PORT (decision 0058), and
# prints the lines corral.conf gains. conf/stack.sh starts them when
# CORRAL_REDIS_HA=1:
#   replica    PORT+1, replicating the primary as corral-admin
#   sentinels  PORT+2, PORT+3, PORT+4, monitoring it as "corral", quorum 2,
#              down after 1 s; clients and each other log in with
#              RUN/redis-sentinel-password
# Passwords go only into 0600 files, never into an argv.
set -euo pipefail
RUN=${1:?usage: redis-ha.sh RUN PORT}
PORT=${2:?usage: redis-ha.sh RUN PORT}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
umask 077
[ -f "$RUN/redis-sentinel-password" ] || openssl rand -hex 32 > "$RUN/redis-sentinel-password"
admin=$(cat "$RUN/redis-admin-password")
spw=$(cat "$RUN/redis-sentinel-password")

mkdir -p "$RUN/redis-replica"
cat > "$RUN/redis-replica.conf" <<CONF
include $ROOT/conf/redis.conf
port $((PORT + 1))
dir $RUN/redis-replica
aclfile $RUN/redis-users.acl
replicaof 127.0.0.1 $PORT
masteruser corral-admin
masterauth $admin
CONF

list=""
for i in 1 2 3; do
    mkdir -p "$RUN/sentinel-$i"
    # Sentinel rewrites its file as it learns the topology: its own, 0600.
    cat > "$RUN/sentinel-$i.conf" <<CONF
port $((PORT + 1 + i))
bind 127.0.0.1
dir $RUN/sentinel-$i
requirepass $spw
sentinel sentinel-pass $spw
sentinel monitor corral 127.0.0.1 $PORT 2
sentinel auth-user corral corral-admin
sentinel auth-pass corral $admin
sentinel down-after-milliseconds corral 1000
sentinel failover-timeout corral 5000
CONF
    list="$list${list:+,}127.0.0.1:$((PORT + 1 + i))"
done
echo "redis_sentinels = $list"
echo "redis_master_name = corral"
echo "redis_sentinel_password_file = $RUN/redis-sentinel-password"
