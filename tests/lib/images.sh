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
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NPM_DIR=$HERE/base-image
# The build is named by this script and the npm lock file it installs from.
HASH=$(cat "${BASH_SOURCE[0]}" "$NPM_DIR/package-lock.json" | sha256sum | cut -c1-16)
DEBS_TGZ=$CACHE/debootstrap-$SUITE-minbase-$HASH.tgz
ROOTFS_TAR=$CACHE/rootfs-base-$HASH.tar

die() { echo "images.sh: $*" >&2; exit 1; }
say() { echo "images.sh: $*" >&2; }

image_label() {
    docker image inspect --format '{{ index .Config.Labels "corral.build" }}' "$1" 2>/dev/null || true
}

image_size() {
    docker image inspect --format '{{.Size}}' "$1" | awk '{printf "%.0f MB", $1 / 1e6}'
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

# What E2B's base image gives a user first (issue 9): git, curl, wget,
# certificates, python (python3, pip, venv), node, sudo, ps and top, from
# Debian's archive. npm is not among them: Debian's npm brings 24,000 files of
# node-* packages, and on btrfs with quotas every container remove costs time
# in proportion to the image's files (decision 0042).
TOOLS="ca-certificates curl wget git python3 python3-pip python3-venv python-is-python3
       nodejs sudo procps less nano"
install_tools() {
    local root=$1
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    printf 'deb %s %s main\ndeb %s %s-security main\n' \
        "$MIRROR" "$SUITE" "${MIRROR%/debian}/debian-security" "$SUITE" >"$root/etc/apt/sources.list"
    chroot "$root" apt-get -qq update >&2 || return 1
    # shellcheck disable=SC2086 # a list of package names
    DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get -qq install -y \
        --no-install-recommends $TOOLS >&2 || return 1
    chroot "$root" apt-get clean
    : >"$root/etc/resolv.conf"
}

# npm from the npm registry, pinned with its integrity by the committed lock
# file; its package carries its own dependencies (2,000 files).
install_npm() {
    local root=$1 work=$CACHE/npm.$$
    rm -rf "$work" && mkdir -p "$work"
    cp "$NPM_DIR/package.json" "$NPM_DIR/package-lock.json" "$work/"
    (cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) ||
        { rm -rf "$work"; return 1; }
    mkdir -p "$root/usr/lib/node_modules"
    mv "$work/node_modules/npm" "$root/usr/lib/node_modules/npm"
    rm -rf "$work"
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/bin/npx"
}

# Manuals, docs and message catalogues are a third of the files left and no
# sandbox reads them; licences (copyright) stay.
slim() {
    local root=$1
    find "$root/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete
    find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
        "$root"/usr/share/lintian "$root"/usr/lib/node_modules/npm/docs "$root"/usr/lib/node_modules/npm/man
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
    install_tools "$root" || { rm -rf "$root"; die "installing $TOOLS failed"; }
    install_npm "$root" || { rm -rf "$root"; die "installing npm from $NPM_DIR failed"; }
    slim "$root"
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
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["sleep", "infinity"]' \
        "$ROOTFS_TAR" "$IMAGE:b-$HASH" >/dev/null || die "docker import failed"
    docker tag "$IMAGE:b-$HASH" "$IMAGE:latest" || die "docker tag failed"
}

main() {
    command -v debootstrap >/dev/null || die "debootstrap missing (apt-get install debootstrap)"
    curl -sf --max-time 3 --unix-socket "$SOCK" http://d/_ping >/dev/null ||
        die "dockerd does not answer on $SOCK (tests/lib/docker.sh start)"
    if [ "$(image_label "$IMAGE:latest")" = "$HASH" ]; then
        say "$IMAGE is current (build $HASH, $(image_size "$IMAGE:latest"))"
        return 0
    fi
    mkdir -p "$CACHE"
    build_rootfs
    import_image
    say "$IMAGE ready: $(image_size "$IMAGE:latest")"
}

main "$@"
