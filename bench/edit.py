#!/usr/bin/env python3
"""The edit scenario: a real edit of one source file of a job, recompiled with the job's own
flags, then the relink, timed against rivet's full link of the same inputs, wild's and mold's.

    python3 bench/edit.py ROUNDS [JOB,...] [RIVET]
    python3 bench/edit.py 9                  # every job with an edit recipe (EDIT_JOBS)

An edit recipe regenerates a source file of the job where its build compiled it (the same path,
so that the debug information's paths are the build's) and first checks that the unedited source
recompiles to the job's object byte for byte; the edit is then the only difference. Two edits of
one constant in one function's body (the same code size: an immediate of the same width) make
variants A and B of that object, which the rounds swap in turn, so that every `--incremental`
relink sees an edited object:

  c-hello   examples/hello/greet.c: the line number the greeting prints (`n + 1`)
  synth-1   s0.c: synth_0_0's multiplier (`depth * 73`), which main's call reaches
  cxx-big   bench/cxx_big.cpp: the threshold main prints the generated assembly's size against
  cxx-templates  t0.cpp: how many records the first type's loop makes
  c-debug, shared-big  OpenSSL's crypto/sha/sha256.c, a member of libcrypto.a: SHA-256's first
            round constants (checked by a digest: `openssl dgst -sha256`, the check program)

Configurations, all `--no-fork`: **full** (rivet, a plain link of the edited inputs),
**relink** (rivet `--incremental` over its previous output and state, after the swap: what an
edit-compile-link loop runs), **wild** and **mold** (full links, where installed). Checks: the
relink's report says it patched the output; its output is the plain link's, byte for byte; each
variant's program, run, prints what ld.bfd's link of the same inputs prints, and A's and B's
differ (the edit shows). The jobs without a recipe (their sources are not kept with the corpus,
or a rebuild does not reproduce their objects) are listed as such. Writes
bench/results/edit-DATE.{md,json,png}; `bench/keep.py` keeps them (the `edit` scenario).
"""
import json, os, random, re, shutil, subprocess, sys, tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from corpus import DEFAULT_CACHE, rotated  # noqa: E402
from run import (ROOT, check_output, machine, measure, measured_header, med, rounds_jobs_rivet, save_result,  # noqa: E402
                 spawn_helper)

OUT = Path(os.environ.get("EDIT_BENCH_OUT", "/tmp"))
EDIT_JOBS = "c-hello,synth-1,c-debug,cxx-big,cxx-templates,shared-big"


def compile_at(cc, flags, src_dir, name, text, extra=()):
    """`text` as `src_dir/name`, compiled there by `cc -c FLAGS name`: the object's bytes."""
    src_dir.mkdir(parents=True, exist_ok=True)
    (src_dir / name).write_text(text)
    obj = src_dir / (Path(name).stem + ".o")
    subprocess.run([cc, "-c", *flags, *extra, name, "-o", str(obj)], cwd=src_dir, check=True)
    return obj.read_bytes()


def debug_paths(obj):
    """The source path and compilation directory an object's debug information names."""
    info = subprocess.run(["readelf", "--debug-dump=info", str(obj)], check=True, capture_output=True,
                          text=True).stdout
    name = re.search(r"DW_AT_name\s*:.*: (/\S+)", info).group(1)
    comp_dir = re.search(r"DW_AT_comp_dir\s*:.*: (/\S+)", info).group(1)
    return name, comp_dir


def recipe_c_hello(jd, tmp):
    # Built by `gcc -c -g ABSOLUTE/examples/hello/greet.c`: compiled here from a copy under the
    # same path below a temp directory, which -fdebug-prefix-map takes out of the debug information.
    name, comp_dir = debug_paths(jd / "build" / "greet.o")
    source = (ROOT / "examples" / "hello" / "greet.c").read_text()
    copy, cwd = tmp / name.lstrip("/"), tmp / comp_dir.lstrip("/")
    copy.parent.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)

    def build(text):
        copy.write_text(text)
        subprocess.run(["gcc", "-c", "-g", str(copy), "-o", str(tmp / "greet.o"), f"-fdebug-prefix-map={tmp}="],
                       cwd=cwd, check=True)
        return (tmp / "greet.o").read_bytes()
    return "build/greet.o", source, build, ("n + 1", "n + 2", "n + 3")


def recipe_synth_1(jd, tmp):
    # Generated where the corpus build generated it (capture.json's directory), by the same
    # generator and seeds.
    cap = json.loads((jd / "capture.json").read_text())
    src = Path(cap["cwd"])
    src.mkdir(parents=True, exist_ok=True)
    (src / "synth_types.h").write_text(corpus.synth_header(random.Random(0)))
    (src / "blob.bin").write_bytes(corpus.synth_blob(random.Random(1), 4 * 1024 * 1024))
    source = corpus.synth_file(0, corpus.SYNTH_FILES, random.Random(1))
    flags = ["-g", "-O0", "-fno-eliminate-unused-debug-types"]
    return "build/s0.o", source, lambda text: compile_at("gcc", flags, src, "s0.c", text), \
        ("long acc = depth * 73;", "long acc = depth * 74;", "long acc = depth * 75;")


def recipe_cxx_big(jd, tmp):
    lc = "/usr/lib/llvm-19/bin/llvm-config"
    flags = ["-O1", *subprocess.run([lc, "--cxxflags"], check=True, capture_output=True, text=True).stdout.split()]
    source = (ROOT / "bench" / "cxx_big.cpp").read_text()
    # Both thresholds take a 32-bit immediate; the generated assembly is longer than one and
    # shorter than the other, so the program prints 1, then 0.
    return "build/cxx_big.o", source, lambda text: compile_at("g++", flags, tmp / "cxx", "cxx_big.cpp", text), \
        ("(asmText.size() > 0)", "(asmText.size() > 200)", "(asmText.size() > 100000)")


def recipe_cxx_templates(jd, tmp):
    # Generated where the corpus build generated it, by the same generator.
    src = Path(json.loads((jd / "capture.json").read_text())["cwd"])
    flags = ["-g1", "-O0", "-std=c++17"]
    return "build/t0.o", corpus.cxxt_unit(0), lambda text: compile_at("g++", flags, src, "t0.cpp", text), \
        ("j < 3; j++) v.push_back(R0{", "j < 4; j++) v.push_back(R0{", "j < 5; j++) v.push_back(R0{")


def openssl_recipe(configure_flags, member):
    """An OpenSSL job: sha256.c's first round constant edited (K256[0], in .rodata: the digests it
    computes change; its initial hash words are a merged 16-byte constant at -O2),
    its object rebuilt by the configured tree's Makefile where the corpus build configured it (the
    openssl-src crate's sources, the same Configure flags) and put back into the job's libcrypto.a
    in its place (`ar r`: the same position, deterministic headers)."""
    def recipe(jd, tmp):
        src = Path(json.loads((jd / "capture.json").read_text())["cwd"])
        marker = src / ".rivet-edit-configured"
        if not marker.exists():
            found = corpus.cargo_registry_source('openssl-src = "300"', "*/openssl-src-300.*/openssl")
            shutil.rmtree(src, ignore_errors=True)
            shutil.copytree(found[-1], src, symlinks=True)
            subprocess.run(["perl", "Configure", "linux-x86_64", *configure_flags], cwd=src, check=True,
                           capture_output=True)
            subprocess.run(["make", f"-j{os.cpu_count()}", "build_generated"], cwd=src, check=True, capture_output=True)
            marker.write_text("")
        sha = src / "crypto" / "sha" / "sha256.c"
        pristine = src / "crypto" / "sha" / "sha256.c.orig"
        if not pristine.exists():
            shutil.copy(sha, pristine)
        source = pristine.read_text()
        archive = jd / "build" / "libcrypto.a"

        def build(text):
            sha.write_text(text)
            obj = src / "crypto" / "sha" / member
            obj.unlink(missing_ok=True)
            subprocess.run(["make", f"crypto/sha/{member}"], cwd=src, check=True, capture_output=True)
            out = tmp / "libcrypto.a"
            shutil.copy(archive, out)
            shutil.copy(obj, tmp / member)
            subprocess.run(["ar", "r", str(out), member], cwd=tmp, check=True)
            return out.read_bytes()
        return "build/libcrypto.a", source, build, \
            ("    0x428a2f98UL, 0x71374491UL,", "    0x428a2f99UL, 0x71374491UL,", "    0x428a2f9aUL, 0x71374491UL,")
    return recipe


OPENSSL = ["no-asm", "no-shared", "no-tests", "no-docs", "no-module", "-g", "-O2"]
# What shows c-debug's edit: the `openssl` program's digest of an empty file (its own run lists
# algorithm names, which the edit leaves alone).
SHOW_ARGS = {"c-debug": ["dgst", "-sha256", "/dev/null"]}

RECIPES = {"c-hello": recipe_c_hello, "synth-1": recipe_synth_1, "cxx-big": recipe_cxx_big,
           "cxx-templates": recipe_cxx_templates,
           "c-debug": openssl_recipe(OPENSSL, "libcrypto-lib-sha256.o"),
           "shared-big": openssl_recipe([*OPENSSL, "-fPIC"], "libcrypto-lib-sha256.o")}


def variants(job, jd, tmp):
    """The object the edit changes (relative to the job), and its bytes in variants A and B."""
    obj, source, build, (old, a, b) = RECIPES[job](jd, tmp)
    if source.count(old) < 1:
        sys.exit(f"{job}: the edit's text {old!r} is not in the source")
    if build(source) != (jd / obj).read_bytes():
        sys.exit(f"{job}: the unedited source does not recompile to {obj} byte for byte: the recipe cannot stand "
                 "for the job's build")
    return obj, build(source.replace(old, a, 1)), build(source.replace(old, b, 1))


def report_line(report):
    """The I/O report's `incremental` line (the timing table has rows named `incremental ...` too)."""
    return next((m.group(1) for m in re.finditer(r"^\s*incremental {2,}(\S.*)$", report, re.M)
                 if not re.match(r"[\d.]+ ", m.group(1))), "")


def bench_job(helper, job, rounds, rivet, others):
    jd = DEFAULT_CACHE / "jobs" / job
    meta = json.loads((jd / "job.json").read_text())
    if job in SHOW_ARGS:
        meta["run_args"] = SHOW_ARGS[job]
    tmp = Path(tempfile.mkdtemp(prefix=f"rivet-edit-{job}-"))
    work = tmp / "job"
    # The job with its inputs hard-linked: the edited object is replaced, never written into.
    shutil.copytree(jd, work, copy_function=os.link)
    obj, var_a, var_b = variants(job, jd, tmp)

    def put(data):
        t = work / (obj + ".new")
        t.write_bytes(data)
        os.replace(t, work / obj)

    outs = {k: OUT / f"edit-bench-{job}-{k}" for k in ["full", "relink", *others]}
    cmds = {"full": [str(rivet), "--no-fork"],
            "relink": [str(rivet), "--no-fork", "--incremental", "--print-timing"], **others}
    # What ld.bfd's links of A and B do.
    expected = {}
    for name, data in (("A", var_a), ("B", var_b)):
        put(data)
        ref = OUT / f"edit-bench-{job}-bfd-{name}"
        subprocess.run(["ld.bfd", "@response.txt", "-o", str(ref)], cwd=work, check=True)
        expected[name] = check_output(work, meta, ref)
        ref.unlink()
    shows = expected["A"] != expected["B"]

    def link(label):
        m = measure(helper, [*cmds[label], "@response.txt", "-o", str(outs[label])], work, [], 600,
                    keep_output=label == "relink")
        if not m["ok"]:
            sys.exit(f"{job}: {label} failed: {m.get('error')}")
        return m

    # The relink's first link (a full one, keeping the state), then one relink per variant, each
    # checked.
    current = "A"
    put(var_a)
    for p in (outs["relink"], Path(str(outs["relink"]) + ".rivet-incremental")):
        p.unlink(missing_ok=True)
    link("relink")
    checks = {"patched": True, "identical": True, "runs": True, "why": ""}
    for name, data in (("B", var_b), ("A", var_a)):
        put(data)
        current = name
        said = link("relink")["output"]
        line = report_line(said)
        if "patched in place" not in line:
            checks["patched"], checks["why"] = False, line
        link("full")
        if outs["relink"].read_bytes() != outs["full"].read_bytes():
            checks["identical"] = False
        if check_output(work, meta, outs["relink"]) != expected[name]:
            checks["runs"] = False
    for label in others:
        link(label)
        if check_output(work, meta, outs[label]) != expected[current]:
            checks["runs"] = False
    samples = {k: [] for k in cmds}
    labels = list(cmds)
    for i in range(rounds + 1):
        for label in rotated(labels, i):
            if label == "relink":
                current = "B" if current == "A" else "A"
                put(var_b if current == "B" else var_a)
            m = link(label)
            if label == "relink" and "patched in place" not in m["output"]:
                checks["patched"] = False
                checks["why"] = checks["why"] or report_line(m["output"])
            if i > 0:
                samples[label].append(m)
    for p in outs.values():
        p.unlink(missing_ok=True)
    Path(str(outs["relink"]) + ".rivet-incremental").unlink(missing_ok=True)
    Path(str(outs["relink"]) + ".rivet-incremental-output").unlink(missing_ok=True)
    shutil.rmtree(tmp)
    return obj, shows, checks, samples


def plot(json_path, png_path):
    """The medians of a result as grouped bars per job (log scale): full, relink, wild, mold."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = json.loads(Path(json_path).read_text())
    rows = data["results"]
    jobs = list(dict.fromkeys(r["job"] for r in rows))
    labels = list(dict.fromkeys(r["linker"] for r in rows))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(jobs)), 4.2))
    width = 0.8 / len(labels)
    for k, label in enumerate(labels):
        ys = [next((r["median"] * 1000 for r in rows if r["job"] == j and r["linker"] == label), 0) for j in jobs]
        ax.bar([i + k * width for i in range(len(jobs))], ys, width, label=label)
    ax.set_xticks([i + width * (len(labels) - 1) / 2 for i in range(len(jobs))], jobs)
    ax.set_yscale("log")
    ax.set_ylabel("ms (median, log scale)")
    ax.set_title(f"edit: the --incremental relink after a real edit, against full links ({data['machine']['date']})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)


def main():
    rounds, jobs, rivet, _ = rounds_jobs_rivet(__doc__, EDIT_JOBS)
    m = machine(DEFAULT_CACHE, OUT)
    helper = spawn_helper(DEFAULT_CACHE)
    others = {n: [n, "--no-fork"] for n in ("wild", "mold") if shutil.which(n)}
    header = measured_header(m, rounds) + "."
    results, rows = [], []
    for job in jobs:
        if job not in RECIPES:
            rows.append(f"| {job} | no edit recipe | | | | | | |")
            continue
        obj, shows, checks, samples = bench_job(helper, job, rounds, rivet, others)
        w = {k: med([s["wall"] for s in v]) for k, v in samples.items()}
        cpu = {k: med([s["cpu"] for s in v]) for k, v in samples.items()}
        for label, v in samples.items():
            results.append({"job": job, "linker": label, "runs": len(v), "median": w[label], "cpu": cpu[label],
                            "samples": [{k: s[k] for k in ("wall", "user", "sys", "rss_mb")} for s in v], **checks,
                            "shows": shows})
        others_ms = " / ".join(f"{w[n] * 1000:.1f}" for n in others) or "-"
        ok = lambda b: "yes" if b else "**NO**"
        rows.append(f"| {job} | {obj} | {w['full'] * 1000:.1f} | {w['relink'] * 1000:.1f} "
                    f"(**{w['relink'] / w['full']:.3f}**) | {cpu['full'] * 1000:.1f} / {cpu['relink'] * 1000:.1f} | "
                    f"{others_ms} | {ok(checks['patched'])} | {ok(checks['identical'] and checks['runs'])} / "
                    f"{ok(shows)} |")
        print(rows[-1], flush=True)
        if checks["why"]:
            print(f"  {job}: {checks['why']}", flush=True)
    lines = [f"# edit ({m['date']})", "", header, "",
             "**full**: rivet's plain link of the edited inputs. **relink**: `--incremental` over the previous output "
             "and state, after the edit (variants A and B swapped before every relink). Ratios are against the full "
             f"link. Others: {', '.join(others) or 'none installed'}, full links of the same inputs. Patched: every "
             "relink's report said `patched in place`. Checked: each relink's output is the plain link's, byte for "
             "byte, and runs as ld.bfd's link of the same inputs; the edit shows: A's and B's programs print "
             "differently.", "",
             f"| job | edited object | full ms | relink ms (ratio) | CPU ms full / relink | {' / '.join(others) or '-'} ms "
             "| patched | checked / edit shows |",
             "|---|---|---|---|---|---|---|---|", *rows]
    save_result("edit", m, header, rounds, results, lines)
    stem = f"edit-{m['date'].replace('-', '').replace(' ', '-').replace(':', '')}"
    plot(ROOT / "bench" / "results" / f"{stem}.json", ROOT / "bench" / "results" / f"{stem}.png")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--plot"]:
        plot(sys.argv[2], sys.argv[3])  # python3 bench/edit.py --plot RESULT.json OUT.png
    else:
        main()
