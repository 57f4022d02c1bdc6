#!/usr/bin/env bash
# Runs rivet's whole test suite: unit tests, and integration tests that compile C/C++ programs with
# the system gcc, link them with GNU ld and with rivet, run both and compare. Extra arguments go to
# `cargo test`. Then the programs once more with --icf=all, then self-hosting (scripts/self-host.sh): rivet linked by rivet runs the suite again
# (RIVET_SKIP_SELF_HOST=1 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cargo test --workspace "$@"
# The programs again, linked by rivet with identical code folding: they must still behave like
# GNU ld's builds.
RIVET_TEST_EXTRA_LDFLAGS="-Wl,--icf=all" cargo test --test programs "$@"
if [ -z "${RIVET_SKIP_SELF_HOST:-}" ]; then
    ./scripts/self-host.sh "$@"
fi
