#!/usr/bin/env bash
# templates/code-interpreter-v1/build.sh: builds corral/code-interpreter, the
# image of template code-interpreter-v1 (decision 0088), in two stages so that
# a change of Corral's code does not reinstall Debian's packages:
#  1. corral/base's files, exported, with ./packages installed by apt in a
#     chroot (Debian's archive is all the network there is), matplotlib's font
#     cache warmed as the sandbox's user; imported as
#     corral/code-interpreter-deps, named by the hash of this recipe and of the
#     base image. Minutes, once.
#  2. corral-interp and its kernels added to /usr/lib/corral-interp by a
#     docker build from stage 1, named by the hash of stage 1 and those files.
#     Seconds.
# When an image of the current hash exists, nothing is built.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BASE=${CORRAL_BASE_IMAGE:-corral/base}
DEPS=corral/code-interpreter-deps
IMAGE=${CORRAL_INTERP_IMAGE:-corral/code-interpreter}
# The tree's build, or the installed package's (/usr/lib/corral-interp).
INSTALLED=/usr/lib/corral-interp
BIN=${CORRAL_INTERP_BIN:-$ROOT/build/bin/corral-interp}
[ -n "${CORRAL_INTERP_BIN:-}" ] || [ -x "$BIN" ] || BIN=$INSTALLED/corral-interp
KERNELS=${CORRAL_INTERP_KERNELS:-$ROOT/interp/kernels}
[ -n "${CORRAL_INTERP_KERNELS:-}" ] || [ -d "$KERNELS" ] || KERNELS=$INSTALLED/kernels
MIRROR=${CORRAL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${CORRAL_IMAGE_CACHE:-/var/cache/corral}

die() { echo "code-interpreter-v1: $*" >&2; exit 1; }
say() { echo "code-interpreter-v1: $*" >&2; }

label() {
    docker image inspect --format '{{ index .Config.Labels "corral.build" }}' "$1" 2>/dev/null || true
}

packages() { sed 's/#.*//' "$HERE/packages" | tr -s ' \n' ' '; }

install_packages() {
    local root=$1
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    printf 'deb %s bookworm main\ndeb %s bookworm-security main\n' \
        "$MIRROR" "${MIRROR%/debian}/debian-security" >"$root/etc/apt/sources.list"
    mount -t proc proc "$root/proc"
    local rc=0
    # shellcheck disable=SC2046 # a list of package names
    { chroot "$root" apt-get -qq update &&
        DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get -qq install -y \
            --no-install-recommends $(packages); } >&2 || rc=1
    umount "$root/proc"
    chroot "$root" apt-get clean
    rm -rf "$root"/var/lib/apt/lists/* "$root"/usr/share/man/* "$root"/usr/share/doc/*/[!c]*
    : >"$root/etc/resolv.conf"
    return $rc
}

# The first `import matplotlib.pyplot` builds a font cache (seconds): done
# here once, in the user's home, instead of in every sandbox's first chart.
warm_caches() {
    chroot "$1" /usr/sbin/runuser -u user -- env HOME=/home/user MPLBACKEND=Agg \
        /usr/bin/python3 -c 'import matplotlib.pyplot' >&2
}

build_deps() {
    local tag=$1 root=$CACHE/ci-root.$$ ctr
    say "stage 1: installing $(wc -w <<<"$(packages)") packages on $BASE (minutes, once)"
    rm -rf "$root" && mkdir -p "$root"
    ctr=$(docker create "$BASE") || die "docker create $BASE failed"
    docker export "$ctr" | tar -C "$root" -x || { docker rm "$ctr" >/dev/null; die "export failed"; }
    docker rm "$ctr" >/dev/null
    install_packages "$root" || { rm -rf "$root"; die "apt-get install failed"; }
    warm_caches "$root" || { rm -rf "$root"; die "warming matplotlib's cache failed"; }
    tar --numeric-owner -C "$root" -c . | docker import \
        --change "LABEL corral.build=$tag" \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'WORKDIR /home/user' --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["sleep", "infinity"]' - "$DEPS:$tag" >/dev/null ||
        { rm -rf "$root"; die "docker import failed"; }
    rm -rf "$root"
}

build_image() {
    local deps=$1 tag=$2 ctx=$CACHE/ci-ctx.$$
    say "stage 2: building from $(dirname "$BIN") and $KERNELS"
    rm -rf "$ctx" && mkdir -p "$ctx/kernels"
    cp "$BIN" "$ctx/corral-interp"
    cp "$KERNELS"/* "$ctx/kernels/"
    cat >"$ctx/Dockerfile" <<EOF
FROM $DEPS:$deps
COPY corral-interp /usr/lib/corral-interp/corral-interp
COPY kernels/ /usr/lib/corral-interp/kernels/
LABEL corral.build=$tag corral.template=code-interpreter-v1
EOF
    DOCKER_BUILDKIT=0 docker build -q -t "$IMAGE:b-$tag" "$ctx" >/dev/null ||
        { rm -rf "$ctx"; die "docker build failed"; }
    rm -rf "$ctx"
    docker tag "$IMAGE:b-$tag" "$IMAGE:latest" || die "docker tag failed"
    # Earlier builds' names go; an image a sandbox still runs stays (no -f).
    docker images --format '{{.Repository}}:{{.Tag}}' "$IMAGE" | grep -v -e ":b-$tag\$" -e ':latest$' |
        xargs -r docker rmi >/dev/null 2>&1 || true
}

main() {
    [ -x "$BIN" ] || die "$BIN missing (make)"
    local base_id deps tag
    base_id=$(docker image inspect --format '{{.Id}}' "$BASE:latest" 2>/dev/null) ||
        die "$BASE missing (tests/lib/images.sh)"
    deps=$(cat "$HERE/packages" "${BASH_SOURCE[0]}" <(echo "$base_id") | sha256sum | cut -c1-16)
    tag=$(cat <(echo "$deps") "$BIN" "$KERNELS"/* | sha256sum | cut -c1-16)
    mkdir -p "$CACHE"
    # Suites side by side (decision 0083) build it once: the second waits.
    exec 9>"$CACHE/code-interpreter-v1.lock"
    flock 9
    if [ "$(label "$IMAGE:latest")" = "$tag" ]; then
        say "$IMAGE is current (build $tag)"
        return 0
    fi
    [ "$(label "$DEPS:$deps")" = "$deps" ] || build_deps "$deps"
    build_image "$deps" "$tag"
    say "$IMAGE ready (build $tag)"
}

main "$@"
