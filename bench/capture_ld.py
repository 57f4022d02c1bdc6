#!/usr/bin/env python3
"""A stand-in `ld` that records a link job while the real GNU ld does the link.

corpus.py puts a directory whose `ld` is a symlink to this script first in the compiler's program
path (`gcc -B DIR`, rustc `-C link-arg=-BDIR`). For each link whose output name matches
RIVET_BENCH_CAPTURE_MATCH (an fnmatch pattern, default `*`), it

1. runs the real linker (RIVET_BENCH_REAL_LD, default /usr/bin/ld.bfd; /usr/bin/aarch64-linux-gnu-ld
   for the AArch64 jobs) with the same arguments plus
   `-t`, which prints every input file the linker opens, so the build goes on as usual;
2. copies every input into RIVET_BENCH_JOB_DIR: files under RIVET_BENCH_BUILD_ROOT (default: the
   link's working directory) to `build/<relative path>`, the others to `ext/<absolute path>`; `-lNAME`
   is resolved here (-L directories in order, then ld's default SEARCH_DIRs, honouring
   -Bstatic/-Bdynamic/--push-state) and checked against ld's trace;
3. writes `response.txt` (one argument per line, paths relative to the job directory, no `-o`) and
   `capture.json` (what job.json needs: output kind, input list and sizes, the original command).

System shared libraries and linker scripts (the `.so` files and `libc.so`-style GROUP stubs under
/lib, /lib64, /usr/lib, /usr/local/lib and the cross sysroot /usr/aarch64-linux-gnu/lib) are not copied: the response file names them by absolute path,
and their -L directories are kept so the stubs' relative names still resolve. Objects and archives are
always copied, system ones (crt1.o, libc_nonshared.a, libstdc++.a, ...) included.
"""
import fnmatch, json, os, shlex, shutil, subprocess, sys

REAL_LD = os.environ.get("RIVET_BENCH_REAL_LD", "/usr/bin/ld.bfd")
# The cross toolchains' libraries (Debian's aarch64-linux-gnu sysroot) are system libraries too.
SYSTEM_DIRS = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/local/lib/", "/usr/aarch64-linux-gnu/lib/")

# Options whose next argument is a file the link reads (also accepted as --opt=FILE).
FILE_ARG = {"-T", "--script", "-dT", "--default-script", "--version-script", "--dynamic-list",
            "--retain-symbols-file", "-R", "--just-symbols"}
# Options whose next argument is not an input: passed through with it.
VALUE_ARG = {"-m", "-dynamic-linker", "--dynamic-linker", "-e", "--entry", "-u", "--undefined", "-z", "-soname",
             "-h", "--soname", "-rpath", "--rpath", "-rpath-link", "-y", "--trace-symbol", "--defsym", "--wrap",
             "--exclude-libs", "-a", "-F", "--filter", "-f", "--auxiliary", "-A", "--architecture", "-b", "--format",
             "-G", "-Ttext", "-Tdata", "-Tbss", "-Ttext-segment", "--section-start", "--sysroot", "-Y", "-O",
             "--hash-style", "--sort-section", "--compress-debug-sections", "-Bsymbolic-functions-with-value",
             "--image-base", "--build-id-style", "--package-metadata", "-P", "--depaudit", "--audit"}
# Dropped (with their argument where they take one): the LTO plugin, tracing, map and reproduce files.
DROP_WITH_ARG = {"-plugin", "-plugin-opt", "-Map", "--dependency-file", "--reproduce"}
DROP = {"-t", "--trace", "--print-map", "-M", "--stats"}
DROP_PREFIX = ("-plugin-opt=", "--plugin-opt=", "-Map=", "--Map=", "--dependency-file=", "--reproduce=")
STATIC_ON = {"-Bstatic", "-dn", "-non_shared", "-static"}
STATIC_OFF = {"-Bdynamic", "-dy", "-call_shared"}


def expand_response_files(args, depth=0):
    out = []
    for a in args:
        if a.startswith("@") and os.path.isfile(a[1:]) and depth < 10:
            with open(a[1:]) as f:
                out += expand_response_files(shlex.split(f.read()), depth + 1)
        else:
            out.append(a)
    return out


def default_search_dirs():
    """ld's built-in SEARCH_DIRs (from its default linker script)."""
    try:
        text = subprocess.run([REAL_LD, "--verbose"], capture_output=True, text=True).stdout
    except OSError:
        return []
    dirs = []
    for part in text.split("SEARCH_DIR(")[1:]:
        d = part.split(")")[0].strip('"').lstrip("=")
        dirs.append(d)
    return dirs


def norm(path, cwd):
    return os.path.normpath(os.path.join(cwd, path))


def resolve_lib(name, static, search, cwd):
    if name.startswith(":"):
        candidates = [name[1:]]
    else:
        candidates = ([] if static else [f"lib{name}.so"]) + [f"lib{name}.a"]
    for d in search:
        for c in candidates:
            p = norm(os.path.join(d, c), cwd)
            if os.path.isfile(p):
                return p
    raise SystemExit(f"capture_ld: cannot resolve -l{name} (static={static}) in {search}")


def file_kind(path):
    with open(path, "rb") as f:
        head = f.read(18)
    if head.startswith(b"\x7fELF"):
        return "shared" if head[16] == 3 else "object"
    if head.startswith(b"!<thin>\n"):
        return "thin-archive"
    if head.startswith(b"!<arch>\n"):
        return "archive"
    return "script"


class Job:
    def __init__(self, job_dir, build_root, cwd):
        self.job_dir, self.build_root, self.cwd = job_dir, build_root, cwd
        self.mapped = {}  # absolute source path -> path in the response file
        self.inputs = []  # [{path, kind, bytes, copied}]

    def input(self, path):
        src = norm(path, self.cwd)
        if src in self.mapped:
            return self.mapped[src]
        kind = file_kind(src)
        if kind == "thin-archive":
            raise SystemExit(f"capture_ld: thin archive {src} is not supported (its members live elsewhere)")
        system = src.startswith(SYSTEM_DIRS) and not src.startswith(self.build_root + "/")
        if system and kind in ("shared", "script"):
            rel = src  # referenced in place, not copied
        else:
            if src.startswith(self.build_root + "/"):
                rel = "build/" + os.path.relpath(src, self.build_root)
            else:
                rel = "ext" + src
            dest = os.path.join(self.job_dir, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(src, dest)
        self.mapped[src] = rel
        self.inputs.append({"path": src, "as": rel, "kind": kind, "bytes": os.path.getsize(src), "copied": rel != src})
        return rel


def rewrite(args, job, cwd):
    """Returns (response arguments, output path, -L directories)."""
    search, out, resp = [], "a.out", []
    static, stack = False, []
    lib_args = []  # (index in resp, name, static) resolved after all -L are known (ld searches all of them)
    i = 0

    def value(opt):
        nonlocal i
        a = args[i]
        if a.startswith(opt + "=") and opt.startswith("--"):
            return a[len(opt) + 1:]
        if a != opt and a.startswith(opt) and not opt.startswith("--"):
            return a[len(opt):]
        i += 1
        return args[i]

    while i < len(args):
        a = args[i]
        key = a.split("=", 1)[0] if a.startswith("--") else a
        if a in ("-o", "--output") or a.startswith("--output="):
            out = value("--output" if a.startswith("--output") else "-o")
        elif a.startswith("-o") and len(a) > 2 and not a.startswith("-o="):
            out = a[2:]
        elif a in DROP or a.startswith(DROP_PREFIX):
            pass
        elif a in DROP_WITH_ARG:
            i += 1
        elif a.startswith("-L") or a.startswith("--library-path"):
            d = norm(value("--library-path" if a.startswith("--") else "-L"), cwd)
            search.append(d)
            if d.startswith(SYSTEM_DIRS) or d + "/" in SYSTEM_DIRS:
                resp.append(f"-L{d}")
        elif a.startswith("-l") or a.startswith("--library"):
            name = value("--library" if a.startswith("--") else "-l")
            lib_args.append((len(resp), name, static))
            resp.append(None)
        elif key in FILE_ARG or (a[:2] in ("-T", "-R") and len(a) > 2 and a[:3] not in ("-Tt", "-Td", "-Tb")):
            opt = key if key in FILE_ARG else a[:2]
            f = value(opt)
            # -R DIR is GNU ld's old spelling of -rpath DIR.
            resp += [opt, f if os.path.isdir(norm(f, cwd)) else job.input(f)]
        elif key in VALUE_ARG:
            if a.startswith("--") and "=" in a:
                resp.append(a)
            else:
                resp += [a, args[i + 1]]
                i += 1
        elif a in STATIC_ON:
            static = True
            resp.append(a)
        elif a in STATIC_OFF:
            static = False
            resp.append(a)
        elif a == "--push-state":
            stack.append(static)
            resp.append(a)
        elif a == "--pop-state":
            static = stack.pop() if stack else False
            resp.append(a)
        elif a.startswith("-"):
            resp.append(a)
        else:
            resp.append(job.input(a))
        i += 1
    search += default_search_dirs()
    libs = []
    for idx, name, st in lib_args:
        path = resolve_lib(name, st, search, cwd)
        resp[idx] = job.input(path)
        libs.append(path)
    return resp, out, libs


def output_kind(args):
    if "-shared" in args or "-Bshareable" in args:
        return "shared", "shared"
    static = "-static" in args
    pie = ("-pie" in args or "--pic-executable" in args) and "-no-pie" not in args
    if pie and (static or "--no-dynamic-linker" in args):
        return "exe", "static-pie"
    if static:
        return "exe", "static"
    return "exe", "pie" if pie else "no-pie"


def quote(a):
    return a if a and all(c.isalnum() or c in "-_=./,:+@%" for c in a) else shlex.quote(a)


def main():
    args = expand_response_files(sys.argv[1:])
    cwd = os.getcwd()
    job_dir = os.environ.get("RIVET_BENCH_JOB_DIR")
    pattern = os.environ.get("RIVET_BENCH_CAPTURE_MATCH", "*")
    out = "a.out"
    for k, a in enumerate(args):
        if a == "-o" and k + 1 < len(args):
            out = args[k + 1]
    if not job_dir or not fnmatch.fnmatch(os.path.basename(out), pattern) or "--version" in args or "-v" in args:
        os.execv(REAL_LD, [REAL_LD, *sys.argv[1:]])
    r = subprocess.run([REAL_LD, *args, "-t"], stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout)
        sys.exit(r.returncode)
    traced = {os.path.realpath(norm(l.strip(), cwd)) for l in r.stdout.splitlines()
              if l.strip() and not l.startswith(" ") and os.path.isfile(norm(l.strip(), cwd))}
    if os.path.isdir(job_dir):
        shutil.rmtree(job_dir)
    os.makedirs(job_dir)
    build_root = os.path.normpath(os.environ.get("RIVET_BENCH_BUILD_ROOT", cwd))
    job = Job(job_dir, build_root, cwd)
    resp, out, libs = rewrite(args, job, cwd)
    for lib in libs:
        if os.path.realpath(lib) not in traced:
            raise SystemExit(f"capture_ld: resolved {lib}, which GNU ld did not open: the -l resolution differs")
    with open(os.path.join(job_dir, "response.txt"), "w") as f:
        f.write("".join(quote(a) + "\n" for a in resp))
    kind, mode = output_kind(args)
    extra = sorted(p for p in traced if p not in {os.path.realpath(x["path"]) for x in job.inputs})
    meta = {"kind": kind, "mode": mode, "inputs": job.inputs, "also_read": extra,
            "output_bytes": os.path.getsize(norm(out, cwd)), "original_output": norm(out, cwd),
            "original_args": args, "cwd": cwd, "real_ld": REAL_LD}
    with open(os.path.join(job_dir, "capture.json"), "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
