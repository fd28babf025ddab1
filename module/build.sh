#!/usr/bin/env bash
# module/build.sh [OUTDIR]: builds ngx_http_corral_module.so against Debian's
# nginx-dev (the sources of the installed nginx, /usr/share/nginx/src, with its
# configure flags in conf_flags, so that the binary-compatibility signature
# matches and `load_module` accepts it). OUTDIR defaults to build/nginx-module.
# Idempotent: configure runs once per OUTDIR (again only if module/config
# changes); later runs only recompile the module. Prints the .so's path.
set -euo pipefail

MODDIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$MODDIR/.." && pwd)
OUT=${1:-$ROOT/build/nginx-module}
SRC=/usr/share/nginx/src

die() { echo "module/build.sh: $*" >&2; exit 1; }

[ -f "$SRC/conf_flags" ] || die "$SRC missing: apt-get install nginx-dev"
[ -e /usr/include/openssl/hmac.h ] || die "OpenSSL headers missing: apt-get install libssl-dev"
command -v nginx >/dev/null || die "nginx missing: apt-get install nginx"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TREE="$OUT/src"
STAMP="$TREE/.corral-configured"

if [ ! -f "$STAMP" ] || [ "$MODDIR/config" -nt "$STAMP" ] || [ "$SRC/conf_flags" -nt "$STAMP" ]; then
    rm -rf "$TREE"
    cp -a "$SRC" "$TREE"
    (
        cd "$TREE"
        # Debian's flags only (conf_flags has its hardened --with-cc-opt and
        # --with-ld-opt): nginx's configure would take a caller's CFLAGS (the
        # Makefile's, exported under dpkg-buildpackage) instead of its own.
        unset CFLAGS CPPFLAGS LDFLAGS
        # shellcheck disable=SC1091
        source ./conf_flags
        ./configure "${NGX_CONF_FLAGS[@]}" --add-dynamic-module="$MODDIR" > "$OUT/configure.log" 2>&1 \
            || { tail -30 "$OUT/configure.log" >&2; exit 1; }
    ) || die "configure failed (see $OUT/configure.log)"
    touch "$STAMP"
fi

# Our own make, not a sub-make of the caller's (its jobserver is not ours).
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TREE" -f objs/Makefile modules > "$OUT/make.log" 2>&1 \
    || { cat "$OUT/make.log" >&2; die "make failed"; }
grep 'warning:' "$OUT/make.log" | grep -v '^make' >&2 && die "compiler warnings (see above)"
# Replaced by a rename, and only when it changed: a running nginx has the old
# file mapped, and writing into it in place crashed its workers in a loop.
SO="$OUT/ngx_http_corral_module.so"
if ! cmp -s "$TREE/objs/ngx_http_corral_module.so" "$SO"; then
    cp "$TREE/objs/ngx_http_corral_module.so" "$SO.new"
    mv -f "$SO.new" "$SO"
fi
touch "$SO" # newer than its sources for make, either way
echo "$SO"
