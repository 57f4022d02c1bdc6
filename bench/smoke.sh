#!/usr/bin/env bash
# Smoke test of the benchmark tool (a few seconds): captures the tiny c-hello job into a temporary
# cache and replays it once with ld.bfd and rivet; fails if either link fails or the output does not
# run like ld.bfd's. Uses target/release/rivet (or $CARGO_TARGET_DIR/release/rivet), built if missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d -t rivet-bench-smoke.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
export RIVET_BENCH_CACHE="$tmp/cache"
python3 "$here/corpus.py" build --jobs c-hello
python3 "$here/run.py" --jobs c-hello --linkers bfd,rivet --runs 1 --no-plot --out "$tmp/results" | tee "$tmp/table.md"
grep -q '^| c-hello | rivet | ' "$tmp/table.md"
grep -q '^| c-hello | bfd | ' "$tmp/table.md"
if grep -q -e 'failed' -e '\*\*NO\*\*' "$tmp/table.md"; then
    echo "smoke: a link failed or an output differs" >&2
    exit 1
fi
ls "$tmp"/results/warm-*.json >/dev/null
echo "bench smoke test: ok"
