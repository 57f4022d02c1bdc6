#!/usr/bin/env bash
# Installs what rivet's example and tests need on a fresh Debian 12 machine: gcc/g++ with the static
# C and C++ libraries, binutils (the reference GNU ld, nm, addr2line, ar), strace (holds a link still
# while a test changes its input), autoconf/automake/libtool and cmake (real projects are built
# through rivet), clang 19 with LLVMgold, llvm-ar and lld 19 (clang's LTO through
# the plugin, against lld's; relocatable outputs linked by GNU ld, lld and rivet), and for the
# AArch64 tests Debian's cross toolchain (gcc, g++, binutils and the C library for
# aarch64-linux-gnu) and qemu-user, which runs their programs. Rust comes with the machine.
set -euo pipefail
need=()
command -v gcc >/dev/null || need+=(gcc)
command -v g++ >/dev/null || need+=(g++)
command -v ar >/dev/null && command -v addr2line >/dev/null || need+=(binutils)
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || need+=(libc6-dev)
ls /usr/lib/gcc/x86_64-linux-gnu/*/libstdc++.a >/dev/null 2>&1 || need+=(libstdc++-12-dev)
command -v strace >/dev/null || need+=(strace)
command -v autoreconf >/dev/null || need+=(autoconf)
command -v aclocal >/dev/null || need+=(automake)
command -v libtoolize >/dev/null || need+=(libtool)
command -v cmake >/dev/null || need+=(cmake)
command -v clang-19 >/dev/null || need+=(clang-19)
[ -f /usr/lib/llvm-19/lib/LLVMgold.so ] || need+=(llvm-19-linker-tools)
command -v llvm-ar-19 >/dev/null || need+=(llvm-19)
command -v ld.lld-19 >/dev/null || need+=(lld-19)
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
command -v aarch64-linux-gnu-g++ >/dev/null || need+=(g++-aarch64-linux-gnu)
command -v aarch64-linux-gnu-readelf >/dev/null || need+=(binutils-aarch64-linux-gnu)
[ -f /usr/aarch64-linux-gnu/lib/crt1.o ] || need+=(libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
if [ ${#need[@]} -gt 0 ]; then
    echo "installing: ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
command -v cargo >/dev/null || { echo "cargo is missing: install Rust (rustup) first" >&2; exit 1; }
# Rust's standard library for AArch64, for the AArch64 Rust test (which skips, saying so, where
# rustup cannot fetch it).
if command -v rustup >/dev/null && ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    rustup target add aarch64-unknown-linux-gnu ||
        echo "rustup could not add aarch64-unknown-linux-gnu: the AArch64 Rust test will skip" >&2
fi
