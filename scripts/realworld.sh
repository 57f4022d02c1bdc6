#!/usr/bin/env bash
# Real projects as a test: each Debian source package below is fetched (`apt-get source`, with a
# deb-src entry added to apt's sources if there is none), built with rivet as its linker (gcc -B
# a directory whose `ld` logs each call and runs rivet) and its own test suite run. A project passes
# when its build and tests succeed and rivet did at least one link of it. Not part of the default
# test command (downloads, minutes per project).
#   scripts/realworld.sh                 every project, plain builds
#   scripts/realworld.sh zlib            only these projects
#   RIVET_REALWORLD_CFLAGS="-O2 -flto=auto" scripts/realworld.sh   with link-time optimisation
#   RIVET_REALWORLD_DIR=DIR              where sources and logs go (default: a temp dir)
# Prints one line per project: PASS/FAIL, links done by rivet, the log's path.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cargo build --release --quiet || exit 1
rivet="${CARGO_TARGET_DIR:-$root/target}/release/rivet"
work=${RIVET_REALWORLD_DIR:-$(mktemp -d /tmp/rivet-realworld.XXXXXX)}
mkdir -p "$work/bin"
cflags=${RIVET_REALWORLD_CFLAGS:--O2}

# package|build (run in the unpacked source)|test
PROJECTS=(
    "zlib|./configure && make -j2|make test"
    "expat|cd expat && ./buildconf.sh && ./configure && make -j2|cd expat && make check"
    "libpng1.6|./configure && make -j2|make check"
    "jansson|autoreconf -fi && ./configure && make -j2|make check"
    "tinyxml2|make -j2 CXX=\"\$CXX\" CXXFLAGS=\"\$CXXFLAGS\" LDFLAGS=\"\$LDFLAGS\"|./xmltest"
)

if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "realworld: adding a deb-src entry for bookworm to apt's sources"
    cat > /etc/apt/sources.list.d/rivet-realworld-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get update -qq
fi
command -v dpkg-source >/dev/null || apt-get install -y -qq dpkg-dev

wanted=("$@")
status=0
for p in "${PROJECTS[@]}"; do
    IFS='|' read -r pkg build check <<<"$p"
    if [ ${#wanted[@]} -gt 0 ] && [[ ! " ${wanted[*]} " == *" $pkg "* ]]; then
        continue
    fi
    dir="$work/$pkg"
    rm -rf "$dir" && mkdir -p "$dir"
    log="$dir/build.log"
    links="$dir/ld.log"
    # The logging ld: every link of the project goes through here.
    mkdir -p "$dir/bin"
    printf '#!/bin/sh\necho "$@" >> %s\nexec %s "$@"\n' "$links" "$rivet" > "$dir/bin/ld"
    chmod +x "$dir/bin/ld"
    (cd "$dir" && apt-get source -qq "$pkg") >"$log" 2>&1 || { echo "FAIL $pkg: apt-get source (see $log)"; status=1; continue; }
    src=$(find "$dir" -mindepth 1 -maxdepth 1 -type d ! -name bin | head -1)
    export CC="gcc -B$dir/bin" CXX="g++ -B$dir/bin" CFLAGS="$cflags" CXXFLAGS="$cflags" LDFLAGS="$cflags"
    if (cd "$src" && eval "$build") >>"$log" 2>&1 && (cd "$src" && eval "$check") >>"$log" 2>&1; then
        n=$(wc -l < "$links" 2>/dev/null || echo 0)
        if [ "$n" -gt 0 ]; then
            echo "PASS $pkg: $n links by rivet, tests passed ($log)"
        else
            echo "FAIL $pkg: built and tested, but rivet did no link ($log)"
            status=1
        fi
    else
        echo "FAIL $pkg: build or tests failed (see $log)"
        status=1
    fi
    unset CC CXX CFLAGS CXXFLAGS LDFLAGS
done
exit $status
