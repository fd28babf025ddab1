#!/usr/bin/env bash
# debian/build-debs.sh (make deb): builds the three packages with
# dpkg-buildpackage in a copy of the tree (build/deb-src/: dpkg-buildpackage
# writes its results next to the tree it builds, and debian/rules clean must
# not remove this tree's build/), then collects the .debs, .buildinfo and
# .changes into build/deb/ and runs lintian on them (errors fail the build).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
die() { echo "make deb: $*" >&2; exit 1; }

SRC=$ROOT/build/deb-src
OUT=$ROOT/build/deb
VERSION=$(dpkg-parsechangelog -S Version)
rm -rf "$SRC" "$OUT"
mkdir -p "$SRC/corral-$VERSION" "$OUT"
# The tree as it stands, committed or not (what git knows of, and new files).
git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' \
    | tar --null -T - -cf - | tar -xf - -C "$SRC/corral-$VERSION"
(cd "$SRC/corral-$VERSION" && dpkg-buildpackage -us -uc -b) > "$SRC/build.log" 2>&1 \
    || { tail -40 "$SRC/build.log" >&2; die "dpkg-buildpackage failed (log: $SRC/build.log)"; }
mv "$SRC"/*.deb "$SRC"/*.buildinfo "$SRC"/*.changes "$OUT"/
mv "$SRC"/*.ddeb "$OUT"/ 2>/dev/null || true
command -v lintian >/dev/null || die "lintian is missing: apt-get install lintian (tests/lib/deps.sh)"
lintian --fail-on error "$OUT"/*.changes | tee "$OUT/lintian.txt"
ls "$OUT"/*.deb
