#!/usr/bin/env bash
# conf/nginx/render.sh OUTDIR: renders the include snippets conf/nginx/*.conf.in
# into OUTDIR/*.conf — the one source of Corral's nginx directives, used by
# conf/stack.sh (make up), conf/install.sh (make install) and debian/rules
# (the packages' /usr/share/corral/nginx/): decision 0055.
#
# Settings (environment; all required, so a caller never gets a default it
# did not choose):
#   CORRAL_NGX_SOCKETS   corral-api's FastCGI sockets, space-separated
#   CORRAL_NGX_RATE      per-address requests/s (limit_req_zone)
#   CORRAL_NGX_BURST     per-address burst (limit_req)
#   CORRAL_NGX_BODY      the API's client_max_body_size (2m)
#   CORRAL_NGX_SECRET    the gateway secret's file (corral.conf gateway_secret_file)
#   CORRAL_NGX_CONN_API  API requests in progress per client address (limit_conn)
#   CORRAL_NGX_CONN_DATA data-plane requests in progress per client address
#   CORRAL_NGX_CONN_SANDBOX  data-plane requests in progress per sandbox
#                        (decision 0068)
#   CORRAL_NGX_TUNNELD   corral-tunneld's unix socket (corral.conf tunnel_listen;
#                        decision 0087)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
die() { echo "render.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: conf/nginx/render.sh OUTDIR"
OUT=$1
: "${CORRAL_NGX_SOCKETS:?}" "${CORRAL_NGX_RATE:?}" "${CORRAL_NGX_BURST:?}" \
  "${CORRAL_NGX_BODY:?}" "${CORRAL_NGX_SECRET:?}" "${CORRAL_NGX_CONN_API:?}" \
  "${CORRAL_NGX_CONN_DATA:?}" "${CORRAL_NGX_CONN_SANDBOX:?}" "${CORRAL_NGX_TUNNELD:?}"

ups="" sock=""
for sock in $CORRAL_NGX_SOCKETS; do
    ups+="    server unix:$sock max_fails=1 fail_timeout=1s;"$'\n'
done

mkdir -p "$OUT"
for src in "$HERE"/*.conf.in; do
    dst=$OUT/$(basename "$src" .in)
    sed -e "s|@RATE_ADDR@|$CORRAL_NGX_RATE|g" -e "s|@BURST_ADDR@|$CORRAL_NGX_BURST|g" \
        -e "s|@NGINX_BODY@|$CORRAL_NGX_BODY|g" -e "s|@GATEWAY_SECRET@|$CORRAL_NGX_SECRET|g" \
        -e "s|@CONN_API_ADDR@|$CORRAL_NGX_CONN_API|g" -e "s|@CONN_DATA_ADDR@|$CORRAL_NGX_CONN_DATA|g" \
        -e "s|@CONN_SANDBOX@|$CORRAL_NGX_CONN_SANDBOX|g" -e "s|@TUNNELD_SOCKET@|$CORRAL_NGX_TUNNELD|g" "$src" \
        | awk -v ups="$ups" '{ if ($0 == "@UPSTREAMS@") printf "%s", ups; else print }' > "$dst.tmp"
    # A placeholder left means a template gained one this script does not know.
    left=$(grep -v '^[[:space:]]*#' "$dst.tmp" | grep -o '@[A-Z_]\+@' | sort -u | tr '\n' ' ' || true)
    [ -z "$left" ] || { rm -f "$dst.tmp"; die "$src: placeholders left unrendered: $left"; }
    chmod 0644 "$dst.tmp"
    mv "$dst.tmp" "$dst"
done
