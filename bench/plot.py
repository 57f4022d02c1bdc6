#!/usr/bin/env python3
"""Plots a results JSON written by run.py.

    python3 bench/plot.py RESULTS.json OUT.png

Most scenarios: grouped bars, one group per job and one bar per linker, height = median wall time
divided by the job's fastest median (log scale, so 2x slower looks the same for every job), whiskers
= min..max, the fastest time written under each job. compressed / slow-disk add a second panel with
the time until the output is on disk (link + sync). scale: median wall time against input size,
log-log, one line per linker.
"""
import json, statistics, sys
from pathlib import Path

OTHERS = {"bfd": "#7f7f7f", "gold": "#bcbd22", "lld": "#1f77b4", "mold": "#2ca02c", "wild": "#9467bd", "wild-nogc": "#8c564b", "wild-fork": "#e377c2"}
RIVET_SHADES = ["#d62728", "#ff7f0e", "#e377c2", "#8c564b", "#f5a05a", "#ff9896", "#c49c94", "#a0522d"]


def colors(linkers):
    out, k = {}, 0
    for l in linkers:
        if l in OTHERS:
            out[l] = OTHERS[l]
        else:
            out[l] = RIVET_SHADES[k % len(RIVET_SHADES)]
            k += 1
    return out


def title(data):
    m = data["machine"]
    return (f"{data['scenario']}: median of {data['runs']} runs; {m['date']}, commit {m['commit']}\n"
            f"{m['nproc']} cores, {m['ram_gb']} GB RAM, Linux {m['kernel']}, output on {m['output_fs']}")


def bars(ax, rows, jobs, linkers, col, key, ylabel, sizes):
    import matplotlib.ticker as ticker
    width = 0.84 / max(1, len(linkers))
    top = 1.0
    for i, l in enumerate(linkers):
        xs, ys, lo, hi = [], [], [], []
        for j, job in enumerate(jobs):
            r = rows.get((job, l))
            if r is None or key not in r:
                continue
            best = min(x[key] for (jb, _), x in rows.items() if jb == job and key in x)
            xs.append(j + (i - (len(linkers) - 1) / 2) * width)
            ys.append(r[key] / best)
            if key == "median":
                lo.append((r["median"] - r["min"]) / best)
                hi.append((r["max"] - r["median"]) / best)
            top = max(top, ys[-1] + (hi[-1] if hi else 0))
        ax.bar(xs, ys, width, yerr=[lo, hi] if lo else None, label=l, color=col[l], capsize=1.5,
               error_kw={"elinewidth": 0.7, "ecolor": "#333333"},
               edgecolor="black" if l.startswith("rivet") else "none", linewidth=0.5)
    ax.set_yscale("log")
    ax.set_ylim(0.9, top * 1.15)
    ticks = [t for t in (1, 1.5, 2, 3, 5, 10, 20, 50, 100) if t <= top * 1.15]
    ax.yaxis.set_major_locator(ticker.FixedLocator(ticks))
    ax.yaxis.set_major_formatter(ticker.FixedFormatter([f"{t:g}x" for t in ticks]))
    ax.yaxis.set_minor_locator(ticker.NullLocator())
    ax.axhline(1.0, color="black", linewidth=0.8)
    labels = []
    for job in jobs:
        cand = [(x[key], l) for (jb, l), x in rows.items() if jb == job and key in x]
        best, who = min(cand) if cand else (0, "?")
        labels.append(f"{job} ({sizes.get(job, 0) / 1e6:.0f} MB)\nfastest {best:.3f} s\n({who})")
    ax.set_xticks(range(len(jobs)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)


def plot(json_path, png_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = json.loads(Path(json_path).read_text())
    ok = [r for r in data["results"] if "median" in r]
    linkers = list(dict.fromkeys(r["linker"] for r in data["results"]))
    jobs = list(dict.fromkeys(r["job"] for r in ok))
    col = colors(linkers)
    rows = {(r["job"], r["linker"]): r for r in ok}
    if data["scenario"] == "scale":
        fig, ax = plt.subplots(figsize=(9, 6))
        for l in linkers:
            pts = sorted((r["input_mb"], r["median"]) for r in ok if r["linker"] == l)
            if not pts:
                continue
            rivet = l.startswith("rivet")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=l, color=col[l],
                    linewidth=2.4 if l == "rivet" else 1.4, linestyle="-" if not rivet or l == "rivet" else "--")
            ax.annotate(f"{pts[-1][1]:.2f} s", pts[-1], textcoords="offset points", xytext=(6, 0), fontsize=7,
                        color=col[l], va="center")
        ax.set_xscale("log")
        ax.set_yscale("log")
        sizes = sorted({(r["input_mb"], r["job"]) for r in ok})
        ax.set_xticks([s for s, _ in sizes])
        ax.set_xticklabels([f"{s:.0f} MB\n{j}" for s, j in sizes], fontsize=8)
        ax.minorticks_off()
        import matplotlib.ticker as ticker
        lo, hi = min(r["median"] for r in ok), max(r["median"] for r in ok)
        yt = [m * 10 ** e for e in range(-3, 3) for m in (1, 2, 5) if lo / 1.5 <= m * 10 ** e <= hi * 1.5]
        ax.yaxis.set_major_locator(ticker.FixedLocator(yt))
        ax.yaxis.set_major_formatter(ticker.FixedFormatter([f"{t:g} s" for t in yt]))
        # A guide with slope 1: a linker on it takes time proportional to input size.
        x0, x1 = sizes[0][0], sizes[-1][0]
        y0 = statistics.median(r["median"] for r in ok if r["input_mb"] == x0)
        ax.plot([x0, x1], [y0, y0 * x1 / x0], color="#999999", linestyle=":", linewidth=1, label="proportional to size")
        ax.set_xlabel("inputs (MB)")
        ax.set_ylabel("wall time, median (s)")
        ax.grid(which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    else:
        io = any("synced" in r for r in ok)
        panels = [("median", "wall time / fastest (log; lower is better)")]
        if io:
            panels.append(("synced", "on disk (link + sync) / fastest"))
        width = max(9, 1.0 + len(jobs) * (0.35 + 0.17 * len(linkers)))
        fig, axes = plt.subplots(len(panels), 1, figsize=(width, 4.6 * len(panels)), squeeze=False)
        for ax, (key, label) in zip(axes[:, 0], panels):
            bars(ax, rows, jobs, linkers, col, key, label, {j: m["input_bytes"] for j, m in data["jobs"].items()})
        failed = sorted({f"{r['job']}/{r['linker']}" for r in data["results"] if r.get("failed")})
        if failed:
            axes[-1, 0].text(0, -0.32, "failed: " + ", ".join(failed), transform=axes[-1, 0].transAxes, fontsize=7,
                             color="#b00000")
        axes[0, 0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.suptitle(title(data), fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    plot(sys.argv[1], sys.argv[2])
