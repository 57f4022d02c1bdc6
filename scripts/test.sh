#!/usr/bin/env bash
# Runs rivet's whole test suite: unit tests, and integration tests that compile C/C++ programs with
# the system gcc, link them with GNU ld and with rivet, run both and compare. Extra arguments go to
# `cargo test`. Then the programs once more, compiled -O2 -g with a section per function and
# linked with --gc-sections --icf=all, then with --no-relax, then for AArch64 (under qemu: plain,
# optimised as above, and with --no-relax; the command-line and --incremental tests), then self-hosting (scripts/self-host.sh): rivet linked by rivet runs the integration tests again
# (RIVET_SKIP_SELF_HOST=1 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/check-layout.sh
cargo test --workspace "$@"
# The programs again, optimised with debug info and a section per function and data object, linked
# by rivet with section garbage collection, identical code folding and 2 MiB maximum pages (code
# kept apart from data, the default): they must still behave like GNU ld's builds (of the same
# objects, without those options).
RIVET_TEST_EXTRA_CFLAGS="-O2 -g -ffunction-sections -fdata-sections" \
    RIVET_TEST_EXTRA_LDFLAGS="-Wl,--gc-sections -Wl,--icf=all -Wl,-z,max-page-size=0x200000" \
    cargo test --test programs "$@"
# And once more with every relaxation the linker may skip skipped (`--no-relax`): each mode,
# `-static-pie` too, must still run like GNU ld's build.
RIVET_TEST_EXTRA_LDFLAGS="-Wl,--no-relax" cargo test --test programs "$@"
# The programs for AArch64: compiled by the cross gcc/g++, linked by the cross GNU ld and by rivet,
# both run under qemu-aarch64 (the x86-only ones skip, saying why).
RIVET_TEST_TARGET=aarch64 cargo test --test programs "$@"
# And optimised with a section per function, collected, folded, on 2 MiB pages (the erratum 843419
# sequences of libc.a then need patches: their pages are out of an adr's reach).
RIVET_TEST_TARGET=aarch64 RIVET_TEST_EXTRA_CFLAGS="-O2 -g -ffunction-sections -fdata-sections" \
    RIVET_TEST_EXTRA_LDFLAGS="-Wl,--gc-sections -Wl,--icf=all -Wl,-z,max-page-size=0x200000" \
    cargo test --test programs "$@"
# And with --no-relax (the cross gcc's -static-pie is `-Bstatic -pie --no-dynamic-linker`).
RIVET_TEST_TARGET=aarch64 RIVET_TEST_EXTRA_LDFLAGS="-Wl,--no-relax" cargo test --test programs "$@"
# The command-line tests for AArch64 too (those about x86-64 assembly skip, saying why), and
# --incremental's (the programs run under qemu).
RIVET_TEST_TARGET=aarch64 cargo test --test cli "$@"
RIVET_TEST_TARGET=aarch64 cargo test --test incremental "$@"
if [ -z "${RIVET_SKIP_SELF_HOST:-}" ]; then
    ./scripts/self-host.sh "$@"
fi
