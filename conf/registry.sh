#!/usr/bin/env bash
# conf/registry.sh: Corral's registry's signing key and its config, for
# conf/stack.sh and tests/registry/run.sh (decision 0079).
#
#   conf/registry.sh key DIR
#       DIR/registry.key (EC P-256, 0600: corral.conf registry_key) and
#       DIR/registry.crt (its self-signed certificate: the registry's
#       rootcertbundle), made once: an existing pair is kept.
#   conf/registry.sh conf STORAGE_DIR ADDR REALM CERT [SERVICE [ISSUER]]
#       conf/registry.yml.in rendered on stdout (service corral-registry and
#       issuer corral unless given: corral.conf's registry_service and
#       registry_issuer must say the same).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "registry.sh: $*" >&2; exit 1; }

make_key() { # dir
    local dir=$1
    [ -s "$dir/registry.key" ] && [ -s "$dir/registry.crt" ] && return 0
    mkdir -p "$dir"
    (umask 077
     openssl ecparam -name prime256v1 -genkey -noout -out "$dir/registry.key.new" 2>/dev/null \
         || die "openssl could not make an EC P-256 key in $dir"
     openssl req -x509 -new -key "$dir/registry.key.new" -subj "/CN=corral registry token signer" \
         -days 3650 -out "$dir/registry.crt.new" 2>/dev/null \
         || die "openssl could not certify the registry key in $dir")
    chmod 600 "$dir/registry.key.new"
    chmod 644 "$dir/registry.crt.new"
    # The certificate first: a key without its certificate is made again.
    mv "$dir/registry.crt.new" "$dir/registry.crt"
    mv "$dir/registry.key.new" "$dir/registry.key"
}

render() { # storage, addr, realm, cert[, service[, issuer]]
    [ $# -ge 4 ] || die "usage: conf/registry.sh conf STORAGE_DIR ADDR REALM CERT [SERVICE [ISSUER]]"
    sed -e "s|@STORAGE@|$1|g" -e "s|@ADDR@|$2|g" -e "s|@REALM@|$3|g" -e "s|@CERT@|$4|g" \
        -e "s|@SERVICE@|${5:-corral-registry}|g" -e "s|@ISSUER@|${6:-corral}|g" \
        "$ROOT/conf/registry.yml.in"
}

case "${1:-}" in
key) [ $# -eq 2 ] || die "usage: conf/registry.sh key DIR"; make_key "$2" ;;
conf) shift; render "$@" ;;
*) die "usage: conf/registry.sh key DIR | conf STORAGE_DIR ADDR REALM CERT [SERVICE [ISSUER]]" ;;
esac
