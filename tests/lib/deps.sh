#!/usr/bin/env bash
# Installs the Debian packages Corral builds, tests and runs with, when missing.
set -euo pipefail
PKGS=(build-essential libfcgi-dev libjansson-dev libhiredis-dev libcurl4-openssl-dev libssl-dev
      redis-server nginx-light nginx-dev openssl curl wrk clang libclang-rt-14-dev nodejs npm
      docker.io runsc debootstrap libnftables-dev nftables btrfs-progs iproute2 tmux bubblewrap
      debhelper dpkg-dev lintian zlib1g-dev adduser libnginx-mod-stream docker-registry
      libnghttp2-dev libzmq3-dev python3-ipykernel node-typescript r-cran-irkernel)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs may come from elsewhere than Debian (a newer build); accept any node >= 20.
if command -v node >/dev/null && node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then
    missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -ra missing <<<"${missing[*]}"
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's docker-registry unit starts a registry of its own on :5000
# (htpasswd auth, /var/lib/docker-registry) at install: it would hold the port
# of `make up`'s, which conf/stack.sh runs with Corral's config (decision
# 0079). Stopped only when installed just now: one that was there is the host's.
if [[ " ${missing[*]} " == *" docker-registry "* ]] && command -v systemctl >/dev/null; then
    systemctl disable --now docker-registry.service >/dev/null 2>&1 || true
fi
