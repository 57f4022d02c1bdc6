#!/usr/bin/env bash
# Builds rivet, links examples/hello through gcc with rivet as the linker, runs it, and shows
# rivet's per-phase timing report.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cargo build --release --quiet
target="${CARGO_TARGET_DIR:-target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
ln -s "$(cd "$target/release" && pwd)/rivet" "$work/bin/ld"   # gcc -B DIR runs DIR/ld
gcc -c examples/hello/main.c -o "$work/main.o"
gcc -c examples/hello/greet.c -o "$work/greet.o"
echo "== linking with rivet (gcc -B $work/bin: a dynamic PIE), timing and I/O report:"
gcc -B "$work/bin" "$work/main.o" "$work/greet.o" -o "$work/hello" -Wl,--print-timing
echo "== running the program:"
"$work/hello"
