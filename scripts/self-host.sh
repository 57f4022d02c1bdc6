#!/usr/bin/env bash
# Self-hosting: builds rivet with rivet as its linker (cargo → rustc → cc → rivet), checks that the
# binary really was linked by rivet, then runs the integration tests (every test that links with
# rivet) against that self-linked binary (RIVET_TEST_LINKER; the tests recognise it as rivet and
# check its messages too). They are the test binaries `cargo test` built already (the debug
# profile: only the linker under test is the self-linked one), and the unit tests, which never run
# the linker binary, are not run again.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
stage=$(mktemp -d /tmp/rivet-self-host.XXXXXX)
trap 'rm -rf "$stage"' EXIT
cp "${CARGO_TARGET_DIR:-$PWD/target}/release/rivet" "$stage/rivet-stage1"
mkdir -p "$stage/bin" && ln -s "$stage/rivet-stage1" "$stage/bin/ld"
target="${CARGO_TARGET_DIR:-$PWD/target}/self-host"
# -C linker-features=-lld: rustc ≥ 1.90 would otherwise link with its bundled rust-lld.
RUSTFLAGS="-C linker-features=-lld -C link-arg=-B$stage/bin -C link-arg=-Wl,--reproduce=$stage/self.tar" \
    CARGO_TARGET_DIR="$target" cargo build --release --quiet --bin rivet
self="$target/release/rivet"
# rivet's --reproduce archive exists only if rivet did the link.
# (Listed to a file first: `tar | grep -q` fails under pipefail when grep stops reading early.)
tar tf "$stage/self.tar" > "$stage/self.list" 2>/dev/null || true
grep -q 'response.txt$' "$stage/self.list" || { echo "self-host: rivet did not link $self" >&2; exit 1; }
echo "self-host: $self linked by rivet ($(stat -c %s "$self") bytes); running the integration tests with it"
"$self" --version
RIVET_TEST_LINKER="$self" cargo test --workspace --quiet --test '*' "$@"
