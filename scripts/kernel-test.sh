#!/usr/bin/env bash
# The Linux kernel as a test: a small x86-64 kernel (Debian's linux-source-6.1, tinyconfig plus a
# serial console, initrd, ELF binaries, KASLR with its relocation table, kallsyms) is built with
# rivet as its linker and booted under qemu (TCG) with an initramfs whose /init, a static C
# program also linked by rivet, calls the vDSO's clock_gettime, prints "rivet-vdso-ok" and
# "rivet-kernel-boot-ok" and restarts the machine (qemu runs with -no-reboot, so it exits).
#
# Every x86-64 link of the build is rivet's: the vDSO (-shared, its own script), `ld -r` of the
# thin archives into vmlinux.o, the kallsyms relinks and vmlinux (vmlinux.lds, --emit-relocs, read
# afterwards by arch/x86/tools/relocs), the decompressor (-pie, its own script), and the host
# tools the build runs (fixdep, kconfig, objtool, relocs, ...; gcc -B with the same wrapper).
# The exception is the 16-bit real-mode code, which the kernel links as i386 (`-m elf_i386`):
# rivet writes x86-64 ELF64 only and refuses it ("rivet: error: -m elf_i386: the i386 target is
# not supported ..."). The wrapper runs rivet first on such a link, checks that refusal, and only
# then hands the link to GNU ld (ld.bfd). Each link is logged with its output and its linker.
#
# The wrapper also answers the kernel's scripts/ld-version.sh, which knows only "GNU ld" and
# "LLD": rivet's own --version line ("rivet vX (compatible with GNU ld)") stays as it is (other
# build systems read it), and only the kernel build is told "GNU ld (rivet ...) MIN" with MIN the
# kernel's minimum binutils version (scripts/min-tool-version.sh), so that the kernel takes the
# GNU ld path and enables no feature on the strength of a newer GNU ld. The kernel probes each
# GNU-ld-only option it wants (ld-option) with rivet itself, so what rivet refuses is not passed.
#
# Needs: cargo, gcc, make, flex, bison, bc, libelf-dev, libssl-dev, cpio, xz-utils, qemu-system-x86,
# ld.bfd (binutils) and /usr/src/linux-source-6.1.tar.xz (Debian's linux-source-6.1); run as root
# on Debian, it installs what is missing itself, otherwise:
#   apt-get install -y linux-source-6.1 flex bison bc libelf-dev libssl-dev cpio qemu-system-x86 kmod
# Takes 2-5 minutes for the rivet build on two cores (-j2; 136 s measured, longer when the cores are
# shared), seconds for each boot; about twice that with --reference.
#
#   scripts/kernel-test.sh                 build with rivet and boot
#   scripts/kernel-test.sh --reference     also build and boot the same config linked by GNU ld
#   scripts/kernel-test.sh --keep          keep the work directory (removed on success otherwise)
#   scripts/kernel-test.sh --dir DIR       work in DIR (kept); default: a new /tmp/rivet-kernel.XXXXXX
#   scripts/kernel-test.sh -j N            make -j N (default 2)
#   RIVET_KERNEL_SOURCE=FILE.tar.xz        another kernel source tarball
#
# Exit status: 0 the rivet kernel (and with --reference the GNU ld one) booted and printed the line;
# 1 a build or link failed (the log's tail is printed); 2 a kernel did not print the line within
# the timeout (its console log is printed); 3 something needed is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

keep=no
reference=no
jobs=2
work=
while [ $# -gt 0 ]; do
    case "$1" in
        --keep) keep=yes ;;
        --reference) reference=yes ;;
        --dir) work=$2; keep=yes; shift ;;
        -j) jobs=$2; shift ;;
        -j*) jobs=${1#-j} ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "kernel-test: unknown argument '$1' (see --help)" >&2; exit 3 ;;
    esac
    shift
done

source_tar=${RIVET_KERNEL_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
find_missing() {
missing=
for tool in cargo gcc make flex bison bc cpio xz ld.bfd qemu-system-x86_64 timeout; do
    command -v "$tool" >/dev/null || missing="$missing $tool"
done
[ -f "$source_tar" ] || missing="$missing $source_tar"
[ -f /usr/include/libelf.h ] || missing="$missing libelf-dev"
[ -f /usr/include/openssl/ssl.h ] || missing="$missing libssl-dev"
}
find_missing
# As root on Debian (a fresh CI machine), what is missing is installed first.
if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "kernel-test: installing the packages it needs (missing:$missing)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        linux-source-6.1 flex bison bc libelf-dev libssl-dev cpio xz-utils qemu-system-x86 kmod binutils >/dev/null
    find_missing
fi
if [ -n "$missing" ]; then
    echo "kernel-test: missing:$missing" >&2
    echo "kernel-test: apt-get install -y linux-source-6.1 flex bison bc libelf-dev libssl-dev cpio qemu-system-x86 kmod" >&2
    exit 3
fi

cargo build --release --quiet || exit 1
work=${work:-$(mktemp -d /tmp/rivet-kernel.XXXXXX)}
mkdir -p "$work/bin" "$work/gcc-rivet"
work=$(cd "$work" && pwd)
# The run tests one binary: a copy, so that a rebuild meanwhile does not change it.
cp "${CARGO_TARGET_DIR:-$root/target}/release/rivet" "$work/bin/rivet"
links="$work/links.log"
: > "$links"

echo "kernel-test: work directory $work"
echo "kernel-test: unpacking $source_tar"
src="$work/src"
mkdir -p "$src"
tar -xJf "$source_tar" -C "$src" --strip-components=1 || exit 1
min_binutils=$("$src/scripts/min-tool-version.sh" binutils) || exit 1

# The linker the kernel build runs as $(LD), and gcc's `ld` (gcc -B) for the host tools and /init.
cat > "$work/bin/ld" <<EOF
#!/bin/sh
# rivet for the kernel build: see scripts/kernel-test.sh in rivet's repository.
rivet="$work/bin/rivet"
log="$links"
EOF
cat >> "$work/bin/ld" <<EOF
min_binutils="$min_binutils"
EOF
cat >> "$work/bin/ld" <<'EOF'
out=a.out
prev=
i386=no
probe=no
for a in "$@"; do
    case "$prev" in
        -o) out=$a ;;
        -m) case "$a" in elf_i386*) i386=yes ;; esac ;;
    esac
    case "$a" in
        -melf_i386*) i386=yes ;;
        -v|-V) probe=yes ;;
        --version)
            # Only the kernel's scripts/ld-version.sh asks this (first line, "GNU ld ... VERSION").
            echo "GNU ld ($("$rivet" --version | head -n 1); answering the kernel's ld-version.sh as GNU ld $min_binutils) $min_binutils"
            exit 0 ;;
    esac
    prev=$a
done
if [ $probe = yes ]; then
    # An option probe (ld-option: LD FLAGS -v): rivet's own answer, logged apart.
    "$rivet" "$@"
    rc=$?
    echo "probe rc=$rc: $*" >> "$log.probes"
    exit $rc
fi
if [ $i386 = yes ]; then
    # rivet must refuse the i386 target by name; only then does GNU ld link it.
    msg=$("$rivet" "$@" 2>&1)
    case "$msg" in
        *"the i386 target is not supported"*) ;;
        *) echo "kernel-test: rivet did not refuse an i386 link as expected: $msg" >&2; exit 1 ;;
    esac
    echo "ld.bfd (i386: rivet refused) $out" >> "$log"
    exec /usr/bin/ld.bfd "$@"
fi
"$rivet" "$@"
rc=$?
echo "rivet $out$( [ $rc = 0 ] || echo " FAILED rc=$rc")" >> "$log"
exit $rc
EOF
chmod +x "$work/bin/ld"
ln -sf ../bin/ld "$work/gcc-rivet/ld"

config_opts="-e 64BIT -e PRINTK -e TTY -e SERIAL_8250 -e SERIAL_8250_CONSOLE -e BLK_DEV_INITRD -e BINFMT_ELF
    -e BINFMT_SCRIPT -e RELOCATABLE -e RANDOMIZE_BASE -e KALLSYMS -e KALLSYMS_ALL"

# build NAME LD HOSTLDFLAGS: configures and builds bzImage in $work/NAME.
build() {
    local name=$1 ld=$2 hostld=$3 out="$work/$1" log="$work/$1.log"
    local mk=(make -C "$src" O="$out" ARCH=x86_64 LD="$ld" HOSTLDFLAGS="$hostld")
    echo "kernel-test: building the $name kernel in $out (log $log)"
    local start=$SECONDS
    mkdir -p "$out"
    if ! { "${mk[@]}" tinyconfig &&
        "$src/scripts/config" --file "$out/.config" $config_opts &&
        "${mk[@]}" olddefconfig &&
        "${mk[@]}" -j"$jobs" bzImage; } > "$log" 2>&1; then
        echo "kernel-test: the $name build failed:"
        tail -n 30 "$log"
        return 1
    fi
    for opt in $config_opts; do
        [ "$opt" = -e ] && continue
        grep -q "^CONFIG_$opt=y" "$out/.config" || { echo "kernel-test: CONFIG_$opt is not set in the $name build"; return 1; }
    done
    echo "kernel-test: $name bzImage built in $((SECONDS - start)) s"
}

# The initramfs: /init calls the vDSO's __vdso_clock_gettime (found as a dynamic loader finds it,
# so the vDSO rivet linked is used at run time) and compares it with the system call, prints
# "rivet-vdso-ok" and "rivet-kernel-boot-ok", and restarts; linked by rivet (gcc -B).
echo "kernel-test: building the initramfs"
mkdir -p "$work/initramfs"
cat > "$work/init.c" <<'EOF'
#include <elf.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void say(const char *s) { write(1, s, strlen(s)); }

/* The vDSO's own export of NAME, found through its dynamic section and DT_HASH as a dynamic
   loader finds it: this is the image the kernel's build linked (-shared, vdso.lds). */
static void *vdso_sym(const char *name) {
    unsigned long base = getauxval(AT_SYSINFO_EHDR);
    if (!base) return 0;
    const Elf64_Ehdr *eh = (const void *)base;
    const Elf64_Phdr *ph = (const void *)(base + eh->e_phoff);
    unsigned long bias = 0, dyn_addr = 0;
    int have_load = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && !have_load) { bias = base + ph[i].p_offset - ph[i].p_vaddr; have_load = 1; }
        if (ph[i].p_type == PT_DYNAMIC) dyn_addr = ph[i].p_vaddr;
    }
    if (!have_load || !dyn_addr) return 0;
    const Elf64_Sym *symtab = 0; const char *strtab = 0; const Elf32_Word *hash = 0;
    for (const Elf64_Dyn *d = (const void *)(bias + dyn_addr); d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_SYMTAB) symtab = (const void *)(bias + d->d_un.d_ptr);
        if (d->d_tag == DT_STRTAB) strtab = (const void *)(bias + d->d_un.d_ptr);
        if (d->d_tag == DT_HASH) hash = (const void *)(bias + d->d_un.d_ptr);
    }
    if (!symtab || !strtab || !hash) return 0;
    for (Elf32_Word i = 0; i < hash[1]; i++)
        if (symtab[i].st_shndx != SHN_UNDEF && !strcmp(strtab + symtab[i].st_name, name))
            return (void *)(bias + symtab[i].st_value);
    return 0;
}

int main(void) {
    int (*vdso_gettime)(clockid_t, struct timespec *) = vdso_sym("__vdso_clock_gettime");
    struct timespec a, b;
    if (!vdso_gettime) {
        say("rivet-vdso-missing\n");
    } else if (vdso_gettime(CLOCK_MONOTONIC, &a) != 0 || syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b) != 0 ||
               vdso_gettime(CLOCK_MONOTONIC, &a) != 0 || a.tv_sec < b.tv_sec || a.tv_sec > b.tv_sec + 5) {
        say("rivet-vdso-wrong\n");
    } else {
        say("rivet-vdso-ok\n");
    }
    say("rivet-kernel-boot-ok\n");
    sync();
    /* tinyconfig has no ACPI to power off with: restart, which ends qemu under -no-reboot. */
    reboot(RB_AUTOBOOT);
    return 1;
}
EOF
gcc -static -O2 -Wall -B "$work/gcc-rivet" -o "$work/initramfs/init" "$work/init.c" || exit 1
grep -q "^rivet $work/initramfs/init$" "$links" || { echo "kernel-test: /init was not linked by rivet"; exit 1; }
(cd "$work/initramfs" && echo init | cpio --quiet -o -H newc > "$work/initramfs.cpio") || exit 1

# boot NAME: boots $work/NAME's bzImage and looks for the line.
boot() {
    local name=$1 console="$work/$1.console"
    echo "kernel-test: booting the $name kernel (console $console)"
    timeout 180 qemu-system-x86_64 -kernel "$work/$name/arch/x86/boot/bzImage" -initrd "$work/initramfs.cpio" \
        -nographic -append "console=ttyS0 panic=-1" -no-reboot -m 256M < /dev/null > "$console" 2>&1
    local rc=$?
    if grep -q "^rivet-kernel-boot-ok" "$console" && grep -q "^rivet-vdso-ok" "$console"; then
        echo "kernel-test: the $name kernel booted: $(grep -a -m1 -o 'Linux version .*' "$console" | tr -d '\r')"
        [ $rc = 0 ] || echo "kernel-test: (qemu exited with status $rc after the line)"
        return 0
    fi
    echo "kernel-test: the $name kernel did not print rivet-vdso-ok and rivet-kernel-boot-ok (qemu status $rc); console:"
    tail -n 40 "$console"
    return 2
}

status=0
build rivet "$work/bin/ld" "-B $work/gcc-rivet" || status=1
echo "kernel-test: links of the rivet build:"
grep -v "initramfs/init$" "$links" | sed 's/^/    /'
if grep -q "FAILED" "$links"; then
    status=1
fi
[ $status = 0 ] && { boot rivet || status=$?; }

if [ $reference = yes ] && [ $status = 0 ]; then
    build gnu-ld ld.bfd "" || status=1
    [ $status = 0 ] && { boot gnu-ld || status=$?; }
    if [ $status = 0 ]; then
        echo "kernel-test: vmlinux program headers, rivet then GNU ld:"
        for name in rivet gnu-ld; do
            readelf -lW "$work/$name/vmlinux" | grep -E '^ +(LOAD|NOTE|GNU_STACK) ' | sed "s/^ */    $name: /"
        done
        echo "kernel-test: bzImage sizes: rivet $(stat -c %s "$work/rivet/arch/x86/boot/bzImage"), GNU ld $(stat -c %s "$work/gnu-ld/arch/x86/boot/bzImage")"
    fi
fi

if [ $status = 0 ] && [ $keep = no ]; then
    rm -rf "$work"
else
    echo "kernel-test: work directory kept: $work"
fi
[ $status = 0 ] && echo "kernel-test: PASS" || echo "kernel-test: FAIL ($status)"
exit $status
