#!/usr/bin/env bash
# tests/lib/images.sh: builds the template images with debootstrap + docker import.
#
# No registry is reachable, so nothing is pulled: corral/base is a Debian
# bookworm minbase root filesystem made here. The image carries the hash of
# this script as label corral.build and as a tag (corral/base:b-<hash>); when an
# image with that label exists the build is skipped. The debootstrap download
# tarball and the finished root filesystem are cached under /var/cache/corral,
# so a rebuild after `docker rmi` is an import of a cached tar: seconds.
set -euo pipefail

IMAGE=${CORRAL_BASE_IMAGE:-corral/base}
SUITE=bookworm
MIRROR=${CORRAL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${CORRAL_IMAGE_CACHE:-/var/cache/corral}
SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
HASH=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)
DEBS_TGZ=$CACHE/debootstrap-$SUITE-minbase-$HASH.tgz
ROOTFS_TAR=$CACHE/rootfs-base-$HASH.tar

die() { echo "images.sh: $*" >&2; exit 1; }
say() { echo "images.sh: $*" >&2; }

image_label() {
    docker image inspect --format '{{ index .Config.Labels "corral.build" }}' "$1" 2>/dev/null || true
}

# Downloads the packages once; later builds unpack the tarball without network.
fetch_debs() {
    [ -s "$DEBS_TGZ" ] && return 0
    say "downloading $SUITE minbase packages into $DEBS_TGZ"
    debootstrap --variant=minbase --include=bash,coreutils,python3,sudo \
        --make-tarball="$DEBS_TGZ.part" "$SUITE" "$CACHE/mk.$$" "$MIRROR" >&2 ||
        die "debootstrap --make-tarball failed"
    rm -rf "$CACHE/mk.$$"
    mv "$DEBS_TGZ.part" "$DEBS_TGZ"
}

# The user sandboxes run as: uid 1000, home /home/user, passwordless sudo.
add_user() {
    local root=$1
    chroot "$root" /usr/sbin/useradd --uid 1000 --create-home --home-dir /home/user \
        --shell /bin/bash user
    printf 'user ALL=(ALL:ALL) NOPASSWD: ALL\n' >"$root/etc/sudoers.d/user"
    chmod 0440 "$root/etc/sudoers.d/user"
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
}

build_rootfs() {
    [ -s "$ROOTFS_TAR" ] && return 0
    local root=$CACHE/root.$$
    fetch_debs
    say "installing the root filesystem (debootstrap --unpack-tarball)"
    rm -rf "$root"
    debootstrap --variant=minbase --include=bash,coreutils,python3,sudo \
        --unpack-tarball="$DEBS_TGZ" "$SUITE" "$root" "$MIRROR" >&2 ||
        { rm -rf "$root"; die "debootstrap failed"; }
    add_user "$root"
    tar --numeric-owner -C "$root" -cf "$ROOTFS_TAR.part" . || { rm -rf "$root"; die "tar failed"; }
    rm -rf "$root"
    mv "$ROOTFS_TAR.part" "$ROOTFS_TAR"
}

import_image() {
    say "importing $IMAGE (build $HASH)"
    docker import \
        --change "LABEL corral.build=$HASH" \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'WORKDIR /home/user' \
        --change 'CMD ["sleep", "infinity"]' \
        "$ROOTFS_TAR" "$IMAGE:b-$HASH" >/dev/null || die "docker import failed"
    docker tag "$IMAGE:b-$HASH" "$IMAGE:latest" || die "docker tag failed"
}

main() {
    command -v debootstrap >/dev/null || die "debootstrap missing (apt-get install debootstrap)"
    curl -sf --max-time 3 --unix-socket "$SOCK" http://d/_ping >/dev/null ||
        die "dockerd does not answer on $SOCK (tests/lib/docker.sh start)"
    if [ "$(image_label "$IMAGE:latest")" = "$HASH" ]; then
        say "$IMAGE is current (build $HASH)"
        return 0
    fi
    mkdir -p "$CACHE"
    build_rootfs
    import_image
    say "$IMAGE ready"
}

main "$@"
