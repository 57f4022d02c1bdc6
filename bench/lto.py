#!/usr/bin/env python3
"""LTO link time: one program compiled `gcc -flto -O2`, linked through gcc (and so through gcc's
liblto_plugin and lto-wrapper, the same plugin for every linker) by GNU ld, mold and rivet, in
rotated rounds. The plugin's code generation dominates; what the linkers add is the difference.

usage: bench/lto.py ROUNDS RIVET [FILES] [JOBS]
  FILES: generated C files (default 150, 24 functions each); JOBS: -flto=JOBS (default 1: the
  plugin's work on one core, so the linkers' own share is not hidden by parallel codegen).
Prints a markdown table of medians (seconds) and each linker's ratio to GNU ld.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import rotated  # noqa: E402


def generate(d, files):
    for f in range(files):
        with open(os.path.join(d, f"m{f}.c"), "w") as out:
            nxt = (f + 1) % files
            out.write(f"int f{nxt}_0(int);\n")
            for i in range(24):
                call = f"f{nxt}_0(x - 1)" if i == 0 else f"f{f}_{i - 1}(x + {i})"
                out.write(f"int f{f}_{i}(int x) {{ if (x <= 0) return {i}; return (x * {i + 3}) % 97 + ({call} & 255); }}\n")
    with open(os.path.join(d, "main.c"), "w") as out:
        out.write("#include <stdio.h>\n")
        out.write("".join(f"int f{f}_23(int);\n" for f in range(files)))
        out.write("int main(void) { long s = 0;\n")
        out.write("".join(f"  s += f{f}_23(3);\n" for f in range(files)))
        out.write('  printf("%ld\\n", s); return 0; }\n')


def main():
    rounds = int(sys.argv[1])
    rivet = os.path.abspath(sys.argv[2])
    files = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    jobs = sys.argv[4] if len(sys.argv) > 4 else "1"
    d = tempfile.mkdtemp(prefix="rivet-lto-bench-")
    generate(d, files)
    sources = [f"m{f}.c" for f in range(files)] + ["main.c"]
    subprocess.run(["gcc", "-c", "-O2", "-flto"] + sources, cwd=d, check=True)
    objects = [s[:-2] + ".o" for s in sources]
    os.makedirs(os.path.join(d, "rivet"))
    os.symlink(rivet, os.path.join(d, "rivet", "ld"))
    linkers = {
        "ld.bfd": [],
        "mold": ["-fuse-ld=mold"],
        "rivet": ["-B", os.path.join(d, "rivet")],
    }
    times = {name: [] for name in linkers}
    outputs = {}
    for r in range(rounds + 1):
        for name in rotated(linkers, r):
            cmd = ["gcc", "-O2", f"-flto={jobs}", "-o", f"exe-{name}"] + linkers[name] + objects
            start = time.perf_counter()
            subprocess.run(cmd, cwd=d, check=True)
            took = time.perf_counter() - start
            if r > 0:  # the first round warms the caches
                times[name].append(took)
            outputs[name] = subprocess.run([os.path.join(d, f"exe-{name}")], capture_output=True).stdout
    assert len(set(outputs.values())) == 1, outputs
    base = statistics.median(times["ld.bfd"])
    print(f"{files} files x 24 functions, gcc 12 -flto={jobs} -O2, {rounds} rounds (medians, seconds)\n")
    print("| linker | median | min | max | / ld.bfd |")
    print("|---|---|---|---|---|")
    for name, t in times.items():
        m = statistics.median(t)
        print(f"| {name} | {m:.3f} | {min(t):.3f} | {max(t):.3f} | {m / base:.3f} |")
    shutil.rmtree(d)


if __name__ == "__main__":
    main()
