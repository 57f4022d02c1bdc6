#!/usr/bin/env bash
# Installs what the benchmark tool needs: the other linkers, btrfs tools for the compressed
# scenario, the AArch64 cross compiler and qemu for the a64-* jobs, valgrind for instruction
# counts, and matplotlib for the plots.
set -euo pipefail
need=()
command -v ld.lld-19 >/dev/null || need+=(lld-19)
command -v mold >/dev/null || need+=(mold)
command -v mkfs.btrfs >/dev/null || need+=(btrfs-progs)
[ -x /usr/lib/llvm-19/bin/llvm-config ] || need+=(llvm-19-dev)
[ -f /usr/include/zstd.h ] || need+=(libzstd-dev zlib1g-dev libxml2-dev)
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
command -v valgrind >/dev/null || need+=(valgrind)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
command -v wild >/dev/null || cargo install wild-linker --version 0.10.0 --locked --quiet  # 0.11 needs rustc 1.99
python3 -c 'import matplotlib' 2>/dev/null || pip install -q matplotlib
cd "$(dirname "$0")/.." && cargo build --release --quiet
