#!/usr/bin/env bash
# Real projects as a test: each Debian source package below is fetched (`apt-get source`, with a
# deb-src entry added to apt's sources if there is none), built with rivet as its linker (gcc -B
# a directory whose `ld` logs each call and its output, then runs rivet) and its own test suite run.
# A project passes when its build and tests succeed, rivet did at least one link of it, and every
# executable and shared library left in its tree (ELF, ET_EXEC or ET_DYN) has the bytes of an output
# rivet wrote, so no link went around it. Not part of the default test command (downloads, minutes
# per project).
#   scripts/realworld.sh                 every project, plain builds
#   scripts/realworld.sh zlib            only these projects
#   RIVET_REALWORLD_CFLAGS="-O2 -flto=auto" scripts/realworld.sh   with link-time optimisation
#   RIVET_REALWORLD_DIR=DIR              where sources and logs go (default: a temp dir)
# Prints one line per project: PASS/FAIL, links done by rivet, the log's path.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cargo build --release --quiet || exit 1
work=${RIVET_REALWORLD_DIR:-$(mktemp -d /tmp/rivet-realworld.XXXXXX)}
mkdir -p "$work/bin"
# The run tests one binary: a copy, so that a rebuild meanwhile does not change it.
rivet="$work/bin/rivet"
cp "${CARGO_TARGET_DIR:-$root/target}/release/rivet" "$rivet"
cflags=${RIVET_REALWORLD_CFLAGS:--O2}

# package|build (run in the unpacked source)|test
PROJECTS=(
    "zlib|./configure && make -j2|make test"
    "expat|cd expat && ./buildconf.sh && ./configure && make -j2|cd expat && make check"
    "libpng1.6|./configure && make -j2|make check"
    "jansson|autoreconf -fi && ./configure && make -j2|make check"
    "tinyxml2|make -j2 CXX=\"\$CXX\" CXXFLAGS=\"\$CXXFLAGS\" LDFLAGS=\"\$LDFLAGS\"|./xmltest"
    "libyaml|./bootstrap && ./configure && make -j2|make check"
    "pugixml|cmake -S . -B build -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=ON -DPUGIXML_BUILD_TESTS=ON && make -C build -j2|cd build && ctest --output-on-failure"
    "double-conversion|cmake -S . -B build -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=ON && make -C build -j2|cd build && ctest --output-on-failure"
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
    outputs="$dir/outputs.sha256"
    # The logging ld: every link of the project goes through here; it records the arguments and,
    # once rivet has written it, the output's checksum (a build may copy an output elsewhere,
    # as CMake does with its compiler-detection programs).
    mkdir -p "$dir/bin"
    cat > "$dir/bin/ld" <<LD
#!/bin/sh
echo "\$@" >> '$links'
out=a.out prev=
for a in "\$@"; do
    [ "\$prev" = -o ] && out=\$a
    case \$a in --output=*) out=\${a#--output=} ;; esac
    prev=\$a
done
'$rivet' "\$@" || exit
if [ -n "\$out" ] && [ -f "\$out" ]; then sha256sum "\$out" >> '$outputs'; fi
LD
    chmod +x "$dir/bin/ld"
    (cd "$dir" && apt-get source -qq "$pkg") >"$log" 2>&1 || { echo "FAIL $pkg: apt-get source (see $log)"; status=1; continue; }
    src=$(find "$dir" -mindepth 1 -maxdepth 1 -type d ! -name bin | head -1)
    # COMPILER_PATH: a gcc run without the -B (CMake's compiler identification) finds it too.
    export CC="gcc -B$dir/bin" CXX="g++ -B$dir/bin" CFLAGS="$cflags" CXXFLAGS="$cflags" LDFLAGS="$cflags"
    export COMPILER_PATH="$dir/bin"
    if (cd "$src" && eval "$build") >>"$log" 2>&1 && (cd "$src" && eval "$check") >>"$log" 2>&1; then
        n=$(wc -l < "$links" 2>/dev/null || echo 0)
        # Every executable and shared library in the tree must be an output rivet wrote (the same
        # bytes: where the build left it, or a copy).
        linked=$(cut -d' ' -f1 "$outputs" 2>/dev/null | sort -u)
        elves=0
        foreign=()
        while IFS= read -r -d '' f; do
            [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
            type=$(od -An -tu2 -j16 -N2 "$f" | tr -d ' ')
            [ "$type" = 2 ] || [ "$type" = 3 ] || continue
            elves=$((elves + 1))
            grep -qxF "$(sha256sum "$f" | cut -d' ' -f1)" <<<"$linked" || foreign+=("${f#"$src"/}")
        done < <(find "$src" -type f -print0)
        if [ "$n" -eq 0 ]; then
            echo "FAIL $pkg: built and tested, but rivet did no link ($log)"
            status=1
        elif [ ${#foreign[@]} -gt 0 ]; then
            echo "FAIL $pkg: not linked by rivet: ${foreign[*]} ($log)"
            status=1
        else
            echo "PASS $pkg: $n links by rivet, all $elves executables and shared libraries in the tree its outputs, tests passed ($log)"
        fi
    else
        echo "FAIL $pkg: build or tests failed (see $log)"
        status=1
    fi
    unset CC CXX CFLAGS CXXFLAGS LDFLAGS COMPILER_PATH
done
exit $status
