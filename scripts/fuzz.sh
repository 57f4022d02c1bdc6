#!/usr/bin/env bash
# Fuzzes rivet's parsers with cargo-fuzz (libFuzzer + AddressSanitizer, nightly toolchain).
#   scripts/fuzz.sh                      every target, 10 minutes or 1,000,000 executions each
#   scripts/fuzz.sh object archive       only these targets
#   FUZZ_SECONDS=60 scripts/fuzz.sh      a smoke run: one minute per target (after the build)
#   FUZZ_SANITIZER=none scripts/fuzz.sh  without AddressSanitizer: 5-15x the executions per second
#                                        (the campaign in docs/fuzzing.md ran this way)
# Every build has debug assertions and overflow checks on (-a): an arithmetic overflow on a
# hostile input is a finding even where a release build would wrap silently.
# Targets: object, archive, shared (a fuzzed .so linked against), relocatable (-r over a fuzzed
# object, its output linked again), lto_plugin (a plugin built for the harness answers with the
# fuzzed symbol list and additions; needs cc): whole links over the fuzzed bytes; linker_script,
# version_script, response_file: the parsers. The seeds in fuzz/seeds/TARGET are real inputs
# (objects from the test programs, small shared libraries, Debian's libc.so script, ...); the
# growing corpus lives outside the repo in
# ~/.cache/rivet-fuzz/TARGET. A finding is saved in fuzz/artifacts/TARGET/ and the run stops with
# the reproduction command. Prints one summary line per target: executions, executions per second,
# coverage (libFuzzer's cov: and ft:), findings.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${FUZZ_SECONDS:-600}
SANITIZER=${FUZZ_SANITIZER:-address}
RUNS=${FUZZ_RUNS:-1000000}
ALL=(object archive shared relocatable lto_plugin linker_script version_script response_file)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")

if ! rustup toolchain list | grep -q '^nightly'; then
    echo "scripts/fuzz.sh: needs the nightly toolchain (rustup toolchain install nightly)" >&2
    exit 1
fi
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cd fuzz
cargo +nightly fuzz build -O -a -s "$SANITIZER" >/dev/null
status=0
summary=()
for t in "${TARGETS[@]}"; do
    corpus="${XDG_CACHE_HOME:-$HOME/.cache}/rivet-fuzz/$t"
    mkdir -p "$corpus" "artifacts/$t"
    log=$(mktemp)
    before=$(ls "artifacts/$t" | wc -l)
    set +e
    # -rss_limit_mb: a whole link of a hostile file must not balloon; -timeout: nor hang.
    cargo +nightly fuzz run -O -a -s "$SANITIZER" "$t" "$corpus" "seeds/$t" -- \
        -max_total_time="$SECONDS_PER_TARGET" -runs="$RUNS" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1
    rc=$?
    set -e
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    # libFuzzer's coverage: edges (cov) and features (ft) of the last status line.
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    found=$(( $(ls "artifacts/$t" | wc -l) - before ))
    summary+=("$(printf '%-16s %10s executions  %6s exec/s  cov %s ft %s  %d new findings (exit %d)' "$t" "${runs:-?}" "${secs:-?}" "${cov:-?}" "${ft:-?}" "$found" "$rc")")
    if [ "$rc" -ne 0 ]; then
        status=1
        grep -E 'panicked at|ERROR: |SUMMARY|Reproduce with|cargo fuzz run' "$log" | head -8 >&2 || true
    fi
    rm -f "$log"
done
printf '%s\n' "${summary[@]}"
exit $status
