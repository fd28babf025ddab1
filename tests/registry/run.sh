#!/usr/bin/env bash
# tests/registry/run.sh: Corral's registry tokens against a real registry
# (decision 0079), as an attacker would try them.
#
# Starts Debian's docker-registry on 127.0.0.1:$CORRAL_TEST_REGISTRY_PORT
# (5099) with conf/registry.yml.in rendered by conf/registry.sh and a fresh
# signing key, all in a temp dir, and stops it at the end. Tokens come from
# common/registry_token.c (registry-sign) and, for the forgeries, from
# tests/registry/forge.mjs. Checks, through the registry's HTTP API:
#   - a push token pushes a blob and a manifest to a workspace's template
#     repository, and a pull token pulls them back byte for byte;
#   - the registry refuses (401/403): no token, a pull token of another
#     repository, a push with a pull-only token (blob and manifest), a push
#     token of another repository, an expired token, one not yet valid, one
#     for another service or issuer, one signed by another key, one whose kid
#     names Corral's key but signed by another, one carrying its own JWK, one
#     with alg "none";
#   - the kid is libtrust's, as openssl and coreutils compute it.
# A missing tool is a failure, never a skip. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
# shellcheck source=tests/lib/wait.sh
. tests/lib/wait.sh

PORT=${CORRAL_TEST_REGISTRY_PORT:-5099}
BUILD=${CORRAL_TEST_BUILD:-build-san}
WS_REPO=corral/w0123456789abcdef/tpl-x
OTHER_REPO=corral/wfedcba9876543210/tpl-x
passed=0 failed=0

die() { echo "registry tests: $*" >&2; exit 1; }
for tool in docker-registry openssl curl node base32 sha256sum gzip; do
    command -v "$tool" >/dev/null || die "$tool is missing (make deps installs docker-registry)"
done
curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/" && die "something already listens on 127.0.0.1:$PORT"
make -s SANITIZE=1 BUILD="$BUILD" "$BUILD/bin/registry-sign" >/dev/null || die "building registry-sign failed"
SIGN=$ROOT/$BUILD/bin/registry-sign
FORGE=$ROOT/tests/registry/forge.mjs

T=$(mktemp -d /tmp/corral-registry.XXXXXX)
REG_PID=
cleanup() {
    if [ -n "$REG_PID" ]; then
        kill "$REG_PID" 2>/dev/null || true
        wait "$REG_PID" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT

check() { # description, then a test command
    local what=$1; shift
    if "$@"; then passed=$((passed + 1)); echo "  ok: $what"
    else failed=$((failed + 1)); echo "  FAIL: $what"; fi
}

# The HTTP status of a registry request with TOKEN ("" for none); the token
# goes to curl as a header file, never on its command line.
status() { # token, method, path, curl args...
    local tok=$1 method=$2 path=$3
    shift 3
    curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' -X "$method" \
        -H @<([ -z "$tok" ] || printf 'Authorization: Bearer %s\n' "$tok") \
        "$@" "http://127.0.0.1:$PORT$path"
}
refused() { local s; s=$(status "$@"); [ "$s" = 401 ] || [ "$s" = 403 ] || { echo "    got $s"; return 1; }; }
answered() { # wanted status, then status's arguments
    local want=$1 s
    shift
    s=$(status "$@")
    [ "$s" = "$want" ] || { echo "    got $s, wanted $want: $(head -c 300 "$T/body")"; return 1; }
}

digest_of() { echo "sha256:$(sha256sum "$1" | cut -d' ' -f1)"; }

# A blob pushed as the registry API does it: an upload started, then PUT whole.
push_blob() { # token, repo, file
    local loc
    answered 202 "$1" POST "/v2/$2/blobs/uploads/" || return 1
    loc=$(sed -n 's/^[Ll]ocation: *//p' "$T/headers" | tr -d '\r')
    loc=${loc#http://127.0.0.1:"$PORT"}
    answered 201 "$1" PUT "$loc&digest=$(digest_of "$3")" \
        -H 'Content-Type: application/octet-stream' --data-binary "@$3"
}

start_registry() {
    bash conf/registry.sh key "$T/keys"
    bash conf/registry.sh conf "$T/storage" "127.0.0.1:$PORT" "https://localhost/v1/registry/token" \
        "$T/keys/registry.crt" > "$T/registry.yml"
    docker-registry serve "$T/registry.yml" > "$T/registry.log" 2>&1 &
    REG_PID=$!
    wait_until 10 "docker-registry's 401 on /v2/" registry_challenges && return 0
    tail -20 "$T/registry.log"
    die "docker-registry did not answer 401 on /v2/ within 10 s"
}
registry_challenges() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/v2/")" = 401 ]; }

# A one-layer image: its layer, config and manifest files in $T/img.
make_image() {
    mkdir -p "$T/img/root"
    echo "built by Corral's registry test" > "$T/img/root/hello"
    tar -C "$T/img/root" -cf "$T/img/layer.tar" hello
    gzip -n -c "$T/img/layer.tar" > "$T/img/layer.tgz"
    printf '{"architecture":"amd64","os":"linux","config":{},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
        "$(digest_of "$T/img/layer.tar")" > "$T/img/config.json"
    printf '{"schemaVersion":2,"mediaType":"%s","config":{"mediaType":"%s","size":%d,"digest":"%s"},"layers":[{"mediaType":"%s","size":%d,"digest":"%s"}]}' \
        application/vnd.docker.distribution.manifest.v2+json \
        application/vnd.docker.container.image.v1+json "$(stat -c %s "$T/img/config.json")" \
        "$(digest_of "$T/img/config.json")" application/vnd.docker.image.rootfs.diff.tar.gzip \
        "$(stat -c %s "$T/img/layer.tgz")" "$(digest_of "$T/img/layer.tgz")" > "$T/img/manifest.json"
}

MANIFEST_TYPE=application/vnd.docker.distribution.manifest.v2+json
push_image() { # token, repo
    push_blob "$1" "$2" "$T/img/layer.tgz" && push_blob "$1" "$2" "$T/img/config.json" &&
        answered 201 "$1" PUT "/v2/$2/manifests/bld-00000000000000000001" \
            -H "Content-Type: $MANIFEST_TYPE" --data-binary "@$T/img/manifest.json"
}
pull_image() { # token, repo
    answered 200 "$1" GET "/v2/$2/manifests/bld-00000000000000000001" -H "Accept: $MANIFEST_TYPE" &&
        cmp -s "$T/body" "$T/img/manifest.json" &&
        answered 200 "$1" GET "/v2/$2/blobs/$(digest_of "$T/img/layer.tgz")" &&
        cmp -s "$T/body" "$T/img/layer.tgz"
}

# libtrust's key id as openssl and coreutils compute it.
openssl_kid() {
    openssl pkey -in "$1" -pubout -outform DER | openssl dgst -sha256 -binary | head -c 30 \
        | base32 | tr -d '=\n' | sed 's/..../&:/g; s/:$//'
}

start_registry
make_image
KEY=$T/keys/registry.key
(umask 077; openssl ecparam -name prime256v1 -genkey -noout -out "$T/other.key" 2>/dev/null)
KID=$("$SIGN" -k "$KEY" -K)
OTHER_KID=$("$SIGN" -k "$T/other.key" -K)
sign() { "$SIGN" -k "$KEY" -s w-test "$@"; }

echo "registry tests: docker-registry on 127.0.0.1:$PORT, state in $T"
check "the kid is libtrust's (openssl's computation)" [ "$KID" = "$(openssl_kid "$KEY")" ]
check "no token: /v2/ refused" refused "" GET /v2/
check "a push token pushes a blob and a manifest" push_image "$(sign -r "$WS_REPO" -p)" "$WS_REPO"
check "a pull token pulls them back, byte for byte" pull_image "$(sign -r "$WS_REPO")" "$WS_REPO"
check "forge.mjs's token with Corral's key and kid is good (the forgeries' control)" \
    pull_image "$(node "$FORGE" "$KEY" "$KID" "$WS_REPO" pull)" "$WS_REPO"

MPATH=/v2/$WS_REPO/manifests/bld-00000000000000000001
check "no token: the manifest refused" refused "" GET "$MPATH"
check "a pull token of another workspace's repository: refused" refused "$(sign -r "$OTHER_REPO")" GET "$MPATH"
check "a pull token of the fleet's template of that name: refused" \
    refused "$(sign -r corral/fleet/tpl-x)" GET "$MPATH"
check "a pull-only token: starting an upload refused" refused "$(sign -r "$WS_REPO")" POST "/v2/$WS_REPO/blobs/uploads/"
check "a pull-only token: a manifest put refused" refused "$(sign -r "$WS_REPO")" PUT "$MPATH" \
    -H "Content-Type: $MANIFEST_TYPE" --data-binary "@$T/img/manifest.json"
check "a push token of another repository: an upload here refused" \
    refused "$(sign -r "$OTHER_REPO" -p)" POST "/v2/$WS_REPO/blobs/uploads/"
check "an expired token (2 minutes, beyond the registry's leeway): refused" \
    refused "$(sign -r "$WS_REPO" -n -420)" GET "$MPATH"
check "a token not valid for 10 minutes yet: refused" refused "$(sign -r "$WS_REPO" -n 600)" GET "$MPATH"
check "a token for another service (aud): refused" refused "$(sign -r "$WS_REPO" -a other-registry)" GET "$MPATH"
check "a token of another issuer: refused" refused "$(sign -r "$WS_REPO" -i someone)" GET "$MPATH"
check "a token signed by another key, its own kid: refused" \
    refused "$("$SIGN" -k "$T/other.key" -r "$WS_REPO")" GET "$MPATH"
check "a token whose kid names Corral's key, signed by another: refused" \
    refused "$(node "$FORGE" "$T/other.key" "$KID" "$WS_REPO" pull)" GET "$MPATH"
check "a token carrying its own signing key (jwk header): refused" \
    refused "$(node "$FORGE" "$T/other.key" "$OTHER_KID" "$WS_REPO" pull jwk)" GET "$MPATH"
check "a token with alg none: refused" refused "$(node "$FORGE" "$KEY" "$KID" "$WS_REPO" pull none)" GET "$MPATH"
check "a forged push on Corral's kid: refused, nothing written" \
    refused "$(node "$FORGE" "$T/other.key" "$KID" "$OTHER_REPO" pull,push)" POST "/v2/$OTHER_REPO/blobs/uploads/"
check "the pushed repository is on disk where the filesystem driver keeps it" \
    [ -d "$T/storage/docker/registry/v2/repositories/$WS_REPO/_manifests" ]
check "the other repository holds nothing" [ ! -e "$T/storage/docker/registry/v2/repositories/$OTHER_REPO" ]

echo "registry tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
