#!/usr/bin/env bash
# conf/redis-acl.sh: prints Redis's ACL file (`aclfile`) for Corral (decision 0030).
#
#   conf/redis-acl.sh CORRAL_PASSWORD_FILE ADMIN_PASSWORD_FILE > users.acl
#
# Three users:
#   default       off, with no password: a connection that has not logged in
#                 can run nothing (NOAUTH) and nobody can log in as it, so a
#                 local user cannot read or rewrite Corral's state. Its command
#                 rights must stay all: Redis 7.0 replays the AOF as this user
#                 and drops every MULTI/EXEC (a script's writes) it may not run,
#                 silently (redis/redis#14541, fixed after 7.0; found by
#                 tests/integration/resilience.test.mjs). Off, they serve
#                 nobody else;
#   corral        what corral-api, corral-sched and corralctl log in as
#                 (corral.conf: redis_user, redis_password_file): only the
#                 commands Corral sends, itself or from its Lua scripts (ACL
#                 checks a script's redis.call too), and only keys corral:*;
#   corral-admin  the operator (and the tests): every command.
# The file holds only SHA-256 hashes of the passwords (#<hex>), never a
# password, and is written 0600 all the same. Installed as
# PREFIX/lib/corral/redis-acl (conf/install.sh).
set -euo pipefail

die() { echo "redis-acl: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: redis-acl CORRAL_PASSWORD_FILE ADMIN_PASSWORD_FILE"

# Every command Corral's code sends. Adding a command to the code means adding
# it here (tests/integration/redis_security.test.mjs checks the code against
# this list); anything else is refused with NOPERM.
CORRAL_COMMANDS=(
    get set del exists pexpire time incrby
    hget hmget hgetall hkeys hvals hset hsetnx hdel hincrby hincrbyfloat
    sadd srem smembers
    lpush blpop rpush lrange ltrim
    zadd zrem zcard zcount zscore zrange zrangebyscore zremrangebyscore zremrangebyrank
    xadd xrange xtrim xread xreadgroup xrevrange xack xdel xautoclaim "xgroup|create" "xinfo|groups"
    eval evalsha
    role wait asking
)

# The hash of a password file's content as corral-api reads it (trailing
# newline, CR and spaces cut): the password stays in this shell (printf is a
# builtin), out of every argv.
hash_of() { # file
    local pw
    [ -r "$1" ] || die "$1: not readable"
    pw=$(<"$1")
    while [[ $pw == *[$'\r\n '] ]]; do pw=${pw%?}; done
    [ ${#pw} -ge 32 ] || die "$1: the password must be at least 32 characters"
    printf %s "$pw" | sha256sum | cut -d' ' -f1
}

corral=$(hash_of "$1")
admin=$(hash_of "$2")
echo "user default off resetpass ~* &* +@all"
echo "user corral-admin on #$admin ~* &* +@all"
echo "user corral on #$corral resetkeys ~corral:* resetchannels -@all ${CORRAL_COMMANDS[*]/#/+}"
