#!/usr/bin/env bash
# conf/install.sh: what `make install` does (DESTDIR, PREFIX as in the Makefile).
#
#   conf/install.sh DESTDIR PREFIX BIN_DIR NGINX_MODULE
#
# Lays down, under DESTDIR (empty: this machine):
#   PREFIX/bin/             corral-api corralctl corral-sched corral-tunneld workerd envd corral-egress
#   PREFIX/lib/nginx/modules/ngx_http_corral_module.so
#   PREFIX/lib/corral/redis-acl   prints Redis's ACL file from the password files
#   /lib/systemd/system/    corral-api@.service corral-sched.service corral-workerd.service
#                           corral-registry-gc.service and .timer
#                           (@PREFIX@ replaced), nginx.service.d/corral-restart.conf,
#                           redis-server.service.d/corral.conf (Redis's files 0600 in 0700)
#   /usr/lib/sysusers.d/corral.conf   the user corral (systemd-sysusers)
#   PREFIX/share/corral/nginx/        the include snippets (conf/nginx/render.sh)
#   PREFIX/share/doc/corral/          systemd.md (conf/systemd/README.md), running-on-several-hosts.md
#   /etc/corral/*.example   corral.conf, workerd.conf, redis.conf (a snippet),
#                           nginx.conf and nginx-gateway.conf (rendered for
#                           production from conf/nginx*.conf.in), daemon.json
# Never writes a file without .example under /etc: configs and secrets are the
# operator's (conf/systemd/README.md).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "install: $*" >&2; exit 1; }

[ $# -eq 4 ] || die "usage: conf/install.sh DESTDIR PREFIX BIN_DIR NGINX_MODULE"
DESTDIR=$1 PREFIX=$2 BIN=$3 MODULE=$4
case "$PREFIX" in /*) ;; *) die "PREFIX must be an absolute path (got '$PREFIX')" ;; esac
PREFIX=${PREFIX%/}
case "$BIN" in /*) ;; *) BIN=$ROOT/$BIN ;; esac
case "$MODULE" in /*) ;; *) MODULE=$ROOT/$MODULE ;; esac

BINARIES=(corral-api corralctl corral-sched corral-tunneld workerd envd corral-egress)
UNITS=(corral-api@.service corral-sched.service corral-tunneld.service corral-workerd.service corral-registry-gc.service
       corral-registry-gc.timer)
SYSTEMD=$ROOT/conf/systemd
MODDIR=$PREFIX/lib/nginx/modules
# The FastCGI sockets of corral-api@1 and @2, as the unit names them
# (%t/corral/api-%i/fcgi.sock); add a server line per further instance.
API_INSTANCES=2
api_socket() { echo "/run/corral/api-$1/fcgi.sock"; }

for b in "${BINARIES[@]}"; do [ -x "$BIN/$b" ] || die "$BIN/$b is missing: run 'make'"; done
[ -f "$MODULE" ] || die "$MODULE is missing: run 'make'"

# Production values of the placeholders conf/stack.sh fills for the local stack
# (rates: its dev profile). Edit the installed example, not these.
DOMAIN=corral.example.com
SNIPPETS=$PREFIX/share/corral/nginx
render_snippets() { # outdir
    local socks="" i
    for i in $(seq 1 $API_INSTANCES); do socks+="$(api_socket "$i") "; done
    # Connection budgets: API 64 requests in progress per address, data plane
    # 256 per address and 128 per sandbox (decision 0068).
    CORRAL_NGX_SOCKETS=$socks CORRAL_NGX_RATE=200 CORRAL_NGX_BURST=400 CORRAL_NGX_BODY=2m \
        CORRAL_NGX_CONN_API=64 CORRAL_NGX_CONN_DATA=256 CORRAL_NGX_CONN_SANDBOX=128 \
        CORRAL_NGX_TUNNELD=/run/corral/tunneld/tunneld.sock \
        CORRAL_NGX_SECRET=/etc/corral/gateway-secret bash "$ROOT/conf/nginx/render.sh" "$1"
}

render_nginx() { # out
    {
        echo "# Example for /etc/nginx/nginx.conf on a gateway host, rendered by conf/install.sh"
        echo "# from conf/nginx.conf.in. Edit the domain, certificates and ports; the data"
        echo "# plane's server is /etc/nginx/corral-gateway.conf (nginx-gateway.conf.example)."
        echo "# Corral's own directives are the snippets in $SNIPPETS (decision 0055)."
        sed -e "s|@RUN@/nginx.pid|/run/nginx.pid|g" \
            -e "s|@RUN@/log/nginx-error.log|/var/log/nginx/error.log|g" \
            -e "s|@RUN@/log/nginx-access.log|/var/log/nginx/corral-access.log|g" \
            -e "s|@RUN@/nginx/|/var/lib/nginx/|g" \
            -e "s|@RUN@/tls/|/etc/corral/tls/|g" \
            -e "s|@RUN@/gateway\*.conf|/etc/nginx/corral-gateway.conf|g" \
            -e "s|listen 127.0.0.1:@PORT@|listen @PORT@|g" -e "s|@SNIPPETS@|$SNIPPETS|g" \
            -e "s|@PORT@|443|g" -e "s|@DOMAIN@|$DOMAIN|g" -e "s|@USER@|www-data|g" \
            -e "s|@MODULE@|$MODDIR/ngx_http_corral_module.so|g" \
            "$ROOT/conf/nginx.conf.in" \
            | awk '{ if ($0 == "@EXTRA_LOCATIONS@") print ""; else print }'
    } > "$1"
}

render_gateway() { # out
    local listen="    listen 443 ssl http2;"$'\n'"    listen 8444 ssl http2;"$'\n'
    {
        echo "# Example for /etc/nginx/corral-gateway.conf (included by nginx.conf.example),"
        echo "# rendered by conf/install.sh from conf/nginx-gateway.conf.in. 443: <port>-<id>.<domain>"
        echo "# (E2B_DOMAIN); 8444: any host with E2b-Sandbox-Id/-Port headers (E2B_SANDBOX_URL)."
        sed -e "s|@RUN@/tls/|/etc/corral/tls/|g" -e "s|@SNIPPETS@|$SNIPPETS|g" \
            -e "s|@DOMAIN@|$DOMAIN|g" -e "s|@CACHE_BYPASS@|off|g" \
            -e "s|@GATEWAY_NAMES@|*.$DOMAIN|g" -e "s|@WORKER_ALLOW@|127.0.0.1:7001 127.0.0.1:7100-7163|g" \
            "$ROOT/conf/nginx-gateway.conf.in" \
            | awk -v listen="$listen" '{ if ($0 == "@GATEWAY_LISTEN@") printf "%s", listen; else print }'
    } > "$1"
}

# A placeholder left outside comments means conf/*.in gained one this script
# does not know: refuse rather than install a config nginx would reject.
check_rendered() { # file...
    local f left
    for f in "$@"; do
        left=$(grep -v '^[[:space:]]*#' "$f" | grep -o '@[A-Z_]\+@' | sort -u | tr '\n' ' ' || true)
        [ -z "$left" ] || die "$f: placeholders left unrendered: $left(teach conf/install.sh them)"
    done
}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

install -d -m 0755 "$DESTDIR$PREFIX/bin" "$DESTDIR$MODDIR" "$DESTDIR/lib/systemd/system" \
    "$DESTDIR/lib/systemd/system/nginx.service.d" "$DESTDIR/lib/systemd/system/redis-server.service.d" \
    "$DESTDIR$PREFIX/lib/corral" "$DESTDIR/usr/lib/sysusers.d" \
    "$DESTDIR$PREFIX/share/doc/corral" "$DESTDIR/etc/corral" "$DESTDIR$SNIPPETS"

for b in "${BINARIES[@]}"; do install -m 0755 "$BIN/$b" "$DESTDIR$PREFIX/bin/$b"; done
install -m 0644 "$MODULE" "$DESTDIR$MODDIR/ngx_http_corral_module.so"

for u in "${UNITS[@]}"; do
    sed "s|@PREFIX@|$PREFIX|g" "$SYSTEMD/$u" > "$TMP/$u"
    install -m 0644 "$TMP/$u" "$DESTDIR/lib/systemd/system/$u"
done
install -m 0644 "$SYSTEMD/nginx-restart.conf" "$DESTDIR/lib/systemd/system/nginx.service.d/corral-restart.conf"
install -m 0644 "$SYSTEMD/redis-server.conf" "$DESTDIR/lib/systemd/system/redis-server.service.d/corral.conf"
# Not the passwords nor the ACL file themselves: secrets are the operator's
# (conf/systemd/README.md makes them); this renders the ACL from them.
install -m 0755 "$ROOT/conf/redis-acl.sh" "$DESTDIR$PREFIX/lib/corral/redis-acl"
install -m 0644 "$SYSTEMD/corral.sysusers" "$DESTDIR/usr/lib/sysusers.d/corral.conf"

install -m 0644 "$SYSTEMD/README.md" "$DESTDIR$PREFIX/share/doc/corral/systemd.md"
install -m 0644 "$ROOT/docs/running-on-several-hosts.md" "$DESTDIR$PREFIX/share/doc/corral/running-on-several-hosts.md"

render_snippets "$DESTDIR$SNIPPETS"
render_nginx "$TMP/nginx.conf.example"
render_gateway "$TMP/nginx-gateway.conf.example"
check_rendered "$TMP/nginx.conf.example" "$TMP/nginx-gateway.conf.example"
ETC=$DESTDIR/etc/corral
install -m 0644 "$TMP/nginx.conf.example" "$ETC/nginx.conf.example"
install -m 0644 "$TMP/nginx-gateway.conf.example" "$ETC/nginx-gateway.conf.example"
install -m 0644 "$SYSTEMD/corral.conf.example" "$ETC/corral.conf.example"
install -m 0644 "$ROOT/conf/workerd.conf" "$ETC/workerd.conf.example"
install -m 0644 "$ROOT/conf/redis.conf" "$ETC/redis.conf.example"
install -m 0644 "$SYSTEMD/daemon.json.example" "$ETC/daemon.json.example"

echo "install: done under ${DESTDIR:-/} (PREFIX $PREFIX); next steps: $PREFIX/share/doc/corral/systemd.md"
