#!/usr/bin/env bash
# tests/install/deb.sh: the Debian packages of `make deb` on this host's stock
# nginx, as an operator installs them (README.md, "Install on a Debian host"):
#   - an unrelated site is enabled on the stock nginx first and must answer,
#     with the same body, at every check until the end;
#   - apt-get install ./build/deb/*.deb: user corral (www-data in its group),
#     secrets 0600 corral:corral, workerd's state dir 0700, the module enabled
#     in modules-enabled, nothing enabled or started;
#   - a site of the test's own (its own self-signed certificate) includes the
#     snippets of /usr/share/corral/nginx/; `nginx -t`, reload;
#   - the daemons run as the packaged units run them (no systemd here): two
#     corral-api and corral-sched as user corral from /usr/bin with
#     /etc/corral/corral.conf, a private redis-server on the test's port with
#     the packaged redis-acl, workerd as root on this host's dockerd;
#   - the e2b SDK suite (sandbox.test.mjs, commands.test.mjs, pinned SDK) in
#     the E2B_DOMAIN routing mode (decision 0055) through the stock nginx;
#   - apt-get purge: the user, group, secrets, state dir, /etc/corral, the
#     module's links and the snippets are gone; `nginx -t` passes and nginx
#     starts again with the unrelated site.
# Leaves the machine as it found it: what it started is stopped (by pid), the
# stock nginx is stopped if it was not running, /etc/nginx is as before.
# dockerd: used if it answers; else started (tests/lib/docker.sh) and stopped.
# Ports (loopback): CORRAL_DEB_SITE_PORT (the unrelated site, 24080),
# CORRAL_DEB_API_PORT (24443), CORRAL_DEB_GW_PORT (sandboxes, 24444),
# CORRAL_DEB_REDIS_PORT (24790), CORRAL_DEB_DATA_PORT (workerd, 24801).
# CORRAL_DEB_NOBUILD=1 uses build/deb/ as it is instead of `make deb` first.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
# shellcheck source=../lib/wait.sh
. "$ROOT/tests/lib/wait.sh"

SITE_PORT=${CORRAL_DEB_SITE_PORT:-24080} API_PORT=${CORRAL_DEB_API_PORT:-24443}
GW_PORT=${CORRAL_DEB_GW_PORT:-24444} REDIS_PORT=${CORRAL_DEB_REDIS_PORT:-24790}
DATA_PORT=${CORRAL_DEB_DATA_PORT:-24801}
DOMAIN=corral.localhost
PKGS=(corral-api corral-workerd libnginx-mod-http-corral)
SITE=/etc/nginx/sites-available/corral-test-other
CSITE=/etc/nginx/sites-available/corral-test
ACCESS_LOG=/var/log/nginx/corral-test-access.log

fails=0
fail() { echo "deb test: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "deb test: FAIL: $*" >&2; exit 1; }
say() { echo "deb test: $*"; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get, /etc/nginx)"
for tool in nginx apt-get dpkg-query openssl curl node npm redis-server setpriv; do
    command -v "$tool" >/dev/null || die "$tool is missing (tests/lib/deps.sh)"
done
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "installed" \
        && die "$p is installed already: this test installs and purges it itself"
done

if [ "${CORRAL_DEB_NOBUILD:-0}" != 1 ]; then
    say "make deb"
    make -s deb >/dev/null || die "make deb failed"
fi
DEBS=()
for p in "${PKGS[@]}"; do
    f=$(compgen -G "build/deb/${p}_*.deb" | head -1)
    [ -n "$f" ] || die "build/deb/${p}_*.deb missing: run 'make deb'"
    DEBS+=("./$f")
done

WORK=$(mktemp -d /tmp/corral-deb.XXXXXX)
BODY="unrelated site $(basename "$WORK")"
NGINX_WAS_RUNNING=0
nginx_running() { local p; p=$(cat /run/nginx.pid 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
nginx_workers() { local p; p=$(cat /run/nginx.pid 2>/dev/null) && [ -n "$p" ] && pgrep -P "$p" | sort; }
# nginx runs workers, none of them one of $1 (its workers before a reload;
# none before a start): what it serves now is its configuration as it is.
nginx_serves_anew() {
    local now
    now=$(nginx_workers)
    [ -n "$now" ] && [ -z "$(comm -12 <(echo "$1") <(echo "$now"))" ]
}
nginx_running && NGINX_WAS_RUNNING=1
cp -a /etc/nginx "$WORK/etc-nginx.before"
DOCKER_OWNED=0

start_bg() { # name, command...: its pid goes to $WORK/pids/name, for cleanup
    local name=$1; shift
    setsid "$@" >>"$WORK/log/$name.log" 2>&1 </dev/null &
    echo "$!" > "$WORK/pids/$name"
}

stop_pid() { # pid
    kill -TERM "$1" 2>/dev/null || return 0
    for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null || true
}

# workerd leaves its sandboxes running when it stops: they are removed here.
remove_worker_objects() {
    local wid
    wid=$(sed -n 's/^worker_id = \([0-9a-f]*\)$/\1/p' /var/lib/corral-workerd/worker 2>/dev/null)
    [ -n "$wid" ] || return 0
    timeout 120 docker ps -aq --filter "label=corral.worker=$wid" | xargs -r timeout 120 docker rm -f >/dev/null 2>&1
    timeout 60 docker network ls -q --filter "label=corral.worker=$wid" | xargs -r timeout 60 docker network rm >/dev/null 2>&1
}

stop_daemons() {
    local f
    for f in "$WORK"/pids/*; do [ -f "$f" ] && stop_pid "$(cat "$f")" && rm -f "$f"; done
}

# Processes of the installed binaries (other engineers' run from their trees).
installed_procs() {
    local d
    for d in /proc/[0-9]*; do
        case "$(readlink "$d/exe" 2>/dev/null)" in
        /usr/bin/corral-api|/usr/bin/corral-sched|/usr/bin/workerd) echo "${d#/proc/}" ;;
        esac
    done
}

cleanup() {
    stop_daemons
    [ -d /var/lib/corral-workerd ] && remove_worker_objects
    rm -f /etc/nginx/sites-enabled/corral-test /etc/nginx/sites-enabled/corral-test-other "$CSITE" "$SITE"
    local p installed=()
    for p in "${PKGS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "installed\|config-files" && installed+=("$p")
    done
    [ ${#installed[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${installed[@]}" >/dev/null 2>&1
    # /etc/nginx exactly as before (a site link the test moved aside, too).
    rm -rf /etc/nginx && cp -a "$WORK/etc-nginx.before" /etc/nginx
    if [ "$NGINX_WAS_RUNNING" = 1 ]; then nginx -s reload 2>/dev/null
    elif nginx_running; then nginx -s quit 2>/dev/null; for _ in $(seq 1 50); do nginx_running || break; sleep 0.1; done; fi
    [ "$DOCKER_OWNED" = 1 ] && bash tests/lib/docker.sh stop >/dev/null 2>&1
    rm -rf /run/corral "$ACCESS_LOG"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$WORK/log" "$WORK/pids" "$WORK/tls" "$WORK/redis"

site_answers() { [ "$(curl -s --max-time 2 "http://127.0.0.1:$SITE_PORT/")" = "$BODY" ]; }
nginx_start_or_reload() {
    local before
    before=$(nginx_workers)
    if nginx_running; then nginx -s reload 2>>"$WORK/log/nginx.log"; else nginx; fi || return 1
    wait_until 30 "nginx to serve its configuration afresh" nginx_serves_anew "$before"
}

# --- 1. the stock nginx with an unrelated site ---------------------------------
# The stock default site listens on port 80, which is not this test's: aside
# until cleanup restores /etc/nginx.
rm -f /etc/nginx/sites-enabled/default
cat > "$SITE" <<EOF
# An operator's unrelated site (tests/install/deb.sh).
server {
    listen 127.0.0.1:$SITE_PORT;
    default_type text/plain;
    location / { return 200 "$BODY"; }
}
EOF
ln -s "$SITE" /etc/nginx/sites-enabled/corral-test-other
nginx -t -q || die "the stock nginx rejects the unrelated site"
nginx_start_or_reload || die "the stock nginx did not start"
site_answers || die "the unrelated site does not answer on $SITE_PORT"
say "stock nginx serves the unrelated site on $SITE_PORT"

# --- 2. apt-get install ------------------------------------------------------------
say "apt-get install -y ${DEBS[*]}"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${DEBS[@]}" >"$WORK/log/apt-install.log" 2>&1 \
    || { cat "$WORK/log/apt-install.log" >&2; die "apt-get install of the packages failed"; }

getent passwd corral >/dev/null || fail "install made no user corral"
id -nG www-data 2>/dev/null | grep -qw corral || fail "www-data is not in group corral (the FastCGI sockets)"
for s in secret gateway-secret redis-password; do
    st=$(stat -c '%a %U:%G' "/etc/corral/$s" 2>/dev/null)
    [ "$st" = "600 corral:corral" ] || fail "/etc/corral/$s is '$st', not 600 corral:corral"
    [ "$(wc -c < "/etc/corral/$s" 2>/dev/null)" = 65 ] || fail "/etc/corral/$s is not 32 random bytes in hex"
done
st=$(stat -c '%a %U' /var/lib/corral-workerd 2>/dev/null)
[ "$st" = "700 root" ] || fail "/var/lib/corral-workerd is '$st', not 700 root"
[ "$(readlink /etc/nginx/modules-enabled/50-mod-http-corral.conf)" = /usr/share/nginx/modules-available/mod-http-corral.conf ] \
    || fail "the module is not enabled in /etc/nginx/modules-enabled/"
for f in corral-http corral-api corral-gateway; do
    [ -f "/usr/share/corral/nginx/$f.conf" ] || fail "snippet /usr/share/corral/nginx/$f.conf missing"
done
# Nothing enabled, nothing started.
enabled=$(find /etc/systemd/system -path '*.wants/*corral*' 2>/dev/null)
[ -z "$enabled" ] || fail "install enabled units: $enabled"
running=$(installed_procs)
[ -z "$running" ] || fail "install started Corral's daemons: pids $running"
site_answers || fail "the unrelated site stopped answering after install"

# --- 3. the operator's site: the snippets in their own TLS servers -------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$DOMAIN" \
    -addext "subjectAltName=DNS:localhost,DNS:api.$DOMAIN,DNS:*.$DOMAIN,IP:127.0.0.1" \
    -keyout "$WORK/tls/server.key" -out "$WORK/tls/server.crt" 2>/dev/null || die "openssl"
cat > "$CSITE" <<EOF
# Corral on this host (tests/install/deb.sh; README.md, "Install on a Debian host").
include /usr/share/corral/nginx/corral-http.conf;

server {
    listen 127.0.0.1:$API_PORT ssl http2;
    server_name localhost api.$DOMAIN;
    ssl_certificate $WORK/tls/server.crt;
    ssl_certificate_key $WORK/tls/server.key;
    access_log $ACCESS_LOG corral;
    include /usr/share/corral/nginx/corral-api.conf;
}

server {
    listen 127.0.0.1:$GW_PORT ssl http2;
    server_name *.$DOMAIN;
    ssl_certificate $WORK/tls/server.crt;
    ssl_certificate_key $WORK/tls/server.key;
    access_log $ACCESS_LOG corral;
    corral_domain $DOMAIN;
    corral_upstream_allow 127.0.0.1:$DATA_PORT;
    include /usr/share/corral/nginx/corral-gateway.conf;
}
EOF
ln -s "$CSITE" /etc/nginx/sites-enabled/corral-test
out=$(nginx -t 2>&1) || die "nginx -t rejects the site with Corral's snippets:"$'\n'"$out"
before=$(nginx_workers)
nginx -s reload 2>>"$WORK/log/nginx.log" || { cat "$WORK/log/nginx.log" >&2; die "nginx reload failed"; }
wait_until 30 "nginx to replace its workers after the reload" nginx_serves_anew "$before" \
    || fail "nginx did not take the reloaded configuration"
site_answers || fail "the unrelated site stopped answering after the reload"

# --- 4. the daemons, as the units run them -----------------------------------------
# corral.conf: this host's Redis port and domain; no fleet share (one tenant's tests);
# workerd's data port, exactly, as the site's corral_upstream_allow (decision 0061).
sed -i -e "s|^redis_port = .*|redis_port = $REDIS_PORT|" -e "s|^domain = .*|domain = $DOMAIN:$GW_PORT|" \
    -e "s|^fleet_share = .*|fleet_share = 100|" \
    -e "s|^worker_data_addrs = .*|worker_data_addrs = 127.0.0.1:$DATA_PORT|" /etc/corral/corral.conf
grep -qx "worker_data_addrs = 127.0.0.1:$DATA_PORT" /etc/corral/corral.conf \
    || die "corral.conf has no worker_data_addrs line to set"
(umask 077; openssl rand -hex 32 > "$WORK/redis-admin-password")
/usr/lib/corral/redis-acl /etc/corral/redis-password "$WORK/redis-admin-password" > "$WORK/users.acl" \
    || die "/usr/lib/corral/redis-acl failed"
(umask 077; start_bg redis redis-server /usr/share/doc/corral-api/examples/redis.conf --port "$REDIS_PORT" \
    --dir "$WORK/redis" --aclfile "$WORK/users.acl")
for _ in $(seq 1 50); do
    REDISCLI_AUTH=$(cat "$WORK/redis-admin-password") redis-cli --no-auth-warning --user corral-admin \
        -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break
    # sleep: between tries of this loop (50 of them).
    sleep 0.1
done

AS_CORRAL=(setpriv --reuid=corral --regid=corral --init-groups)
for i in 1 2; do
    # RuntimeDirectory=corral/api-%i, RuntimeDirectoryMode=0750, UMask=0077
    install -d -m 0755 /run/corral && install -d -m 0750 -o corral -g corral "/run/corral/api-$i"
    (umask 077; start_bg "api-$i" "${AS_CORRAL[@]}" /usr/bin/corral-api -c /etc/corral/corral.conf -l "/run/corral/api-$i/fcgi.sock")
done
(umask 077; start_bg sched "${AS_CORRAL[@]}" /usr/bin/corral-sched -c /etc/corral/corral.conf)
for i in 1 2; do
    for _ in $(seq 1 50); do [ -S "/run/corral/api-$i/fcgi.sock" ] && break; sleep 0.1; done
done
curl -sf --max-time 5 --cacert "$WORK/tls/server.crt" "https://localhost:$API_PORT/health" >/dev/null \
    || { tail -n 5 "$WORK"/log/*.log; die "GET /health through the stock nginx failed"; }
say "corral-api answers through the stock nginx on $API_PORT"

if curl -sf --max-time 3 --unix-socket /var/run/docker.sock http://d/_ping >/dev/null 2>&1; then
    say "dockerd answers: using it"
else
    say "no dockerd: starting one (tests/lib/docker.sh), stopped at the end"
    DOCKER_OWNED=1
    bash tests/lib/docker.sh start || die "dockerd did not start"
fi
# The packaged recipe of the base image (skips the build when the image is there).
bash /usr/share/corral-workerd/images.sh >"$WORK/log/images.log" 2>&1 \
    || die "/usr/share/corral-workerd/images.sh failed (see its log)"
# code-interpreter-v1's, from the packaged server and kernels (/usr/lib/corral-interp).
bash /usr/share/corral-workerd/templates/code-interpreter-v1/build.sh >>"$WORK/log/images.log" 2>&1 \
    || die "the packaged code-interpreter-v1 recipe failed (see $WORK/log/images.log)"
grep -q "building from /usr/lib/corral-interp\|corral/code-interpreter is current" "$WORK/log/images.log" \
    || die "the code-interpreter-v1 image was not built from the package's files"

ctl() { /usr/bin/corralctl -c /etc/corral/corral.conf --json "$@"; }
field() { sed -E "s/.*\"$1\":\"([^\"]*)\".*/\\1/"; }
(umask 077; ctl join-token create --ttl 3600 | field token > "$WORK/workerd.token")
sed -i -e "s|^control_url = .*|control_url = https://127.0.0.1:$API_PORT|" \
    -e "s|^ca_file = .*|ca_file = $WORK/tls/server.crt|" \
    -e "s|^join_token_file = .*|join_token_file = $WORK/workerd.token|" \
    -e "s|^data_addr = .*|data_addr = 127.0.0.1:$DATA_PORT|" /etc/corral/workerd.conf
(umask 077; start_bg workerd /usr/bin/workerd -c /etc/corral/workerd.conf)
for _ in $(seq 1 300); do grep -q "enrolled\|handshake" "$WORK/log/workerd.log" && break; sleep 0.1; done
grep -q "enrolled\|handshake" "$WORK/log/workerd.log" || { tail -n 20 "$WORK/log/workerd.log"; die "workerd did not enrol"; }
[ -f /var/lib/corral-workerd/worker ] || fail "workerd wrote no state into the packaged state dir"

# --- 5. the e2b SDK suite, while the unrelated site is watched --------------------------
bash tests/lib/e2b_modules.sh || die "npm ci failed"
ws=$(ctl workspace create deb-a) || die "corralctl workspace create failed"
other=$(ctl workspace create deb-b | field workspace)
export E2B_API_URL="https://localhost:$API_PORT" NODE_EXTRA_CA_CERTS="$WORK/tls/server.crt"
export E2B_API_KEY; E2B_API_KEY=$(ctl key create --workspace "$(field workspace <<<"$ws")" --role member | field key)
export CORRAL_OTHER_KEY; CORRAL_OTHER_KEY=$(ctl key create --workspace "$other" --role member | field key)
export CORRAL_OWNER_KEY; CORRAL_OWNER_KEY=$(field owner_key <<<"$ws")

( while :; do
    if site_answers; then echo ok; else echo down; fi
    # sleep: the watch's pace, a check every 0.5 s (until it is stopped).
    sleep 0.5
  done >> "$WORK/site-watch" ) &
WATCH=$!
echo "$WATCH" > "$WORK/pids/site-watch"
say "e2b SDK (pinned), routing by host: E2B_DOMAIN=$DOMAIN:$GW_PORT"
CORRAL_E2B_SDK=e2b CORRAL_ROUTING=domain E2B_DOMAIN="$DOMAIN:$GW_PORT" CORRAL_SANDBOX_DOMAIN=$DOMAIN \
    node --test --test-concurrency=1 --test-reporter=spec tests/e2b/sandbox.test.mjs tests/e2b/commands.test.mjs \
    || { fail "the e2b suite failed through the stock nginx"; tail -n 30 "$WORK/log/workerd.log"; }
stop_pid "$WATCH" && rm -f "$WORK/pids/site-watch"
checks=$(wc -l < "$WORK/site-watch")
downs=$(grep -c down "$WORK/site-watch")
[ "$checks" -gt 0 ] && [ "$downs" = 0 ] || fail "the unrelated site failed $downs of $checks checks during the suite"
say "the unrelated site answered all $checks checks during the suite"

# --- 6. purge ----------------------------------------------------------------
stop_daemons
remove_worker_objects
rm -rf /run/corral
[ -z "$(installed_procs)" ] || fail "Corral's daemons still run after they were stopped"
# The operator disables their Corral site first: its directives are the module's.
rm -f /etc/nginx/sites-enabled/corral-test "$CSITE" "$ACCESS_LOG"
say "apt-get purge -y ${PKGS[*]}"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${PKGS[@]}" >"$WORK/log/apt-purge.log" 2>&1 \
    || { cat "$WORK/log/apt-purge.log" >&2; fail "apt-get purge failed"; }
for p in "${PKGS[@]}"; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
    [ -z "$st" ] || [ "$st" = "unknown ok not-installed" ] || fail "$p is still '$st' after purge"
done
getent passwd corral >/dev/null && fail "purge left the user corral"
getent group corral >/dev/null && fail "purge left the group corral"
for f in /etc/corral /var/lib/corral-workerd /usr/share/corral /usr/lib/corral \
    /usr/lib/nginx/modules/ngx_http_corral_module.so /usr/share/nginx/modules-available/mod-http-corral.conf \
    /lib/systemd/system/corral-api@.service /lib/systemd/system/corral-workerd.service; do
    [ -e "$f" ] && fail "purge left $f"
done
left=$(find /etc/nginx/modules-enabled /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled \
    -name '*corral*' 2>/dev/null)
[ -z "$left" ] || fail "purge left links: $left"
# /etc/nginx is as the test found it, but for its unrelated site (and the default site aside).
diff -r -x corral-test-other -x default "$WORK/etc-nginx.before" /etc/nginx >/dev/null \
    || fail "/etc/nginx differs from before install: $(diff -rq -x corral-test-other -x default "$WORK/etc-nginx.before" /etc/nginx)"
out=$(nginx -t 2>&1) || fail "nginx -t after purge:"$'\n'"$out"
nginx -s quit 2>>"$WORK/log/nginx.log"; for _ in $(seq 1 50); do nginx_running || break; sleep 0.1; done
nginx || fail "nginx does not start after purge"
wait_until 30 "nginx's workers after its start" nginx_serves_anew "" || fail "nginx runs no worker after its start"
site_answers || fail "the unrelated site does not answer after purge and a fresh start"

if [ "$fails" -gt 0 ]; then
    echo "deb test: $fails check(s) failed" >&2
    exit 1
fi
say "ok (install, snippets, e2b suite through the stock nginx, purge; the unrelated site answered throughout)"
