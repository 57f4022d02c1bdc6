#!/usr/bin/env python3
"""Plots a results JSON from run.py: grouped bars (median wall time, min–max whiskers) per job and
linker; for the scale scenario, time against input size on log-log axes, one line per linker.

    python3 bench/plot.py RESULTS.json OUT.png
"""
import json, sys
from pathlib import Path


def plot(json_path, png_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = json.loads(Path(json_path).read_text())
    rows = [r for r in data["results"] if not r.get("failed")]
    linkers = list(dict.fromkeys(r["linker"] for r in rows))
    jobs = list(dict.fromkeys(r["job"] for r in rows))
    colors = {l: plt.cm.tab10(i % 10) for i, l in enumerate(linkers)}
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(jobs) * max(1, len(linkers) / 4)), 4.8))
    if data["scenario"] == "scale":
        for l in linkers:
            pts = sorted((r["input_mb"], r["median"]) for r in rows if r["linker"] == l)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=l, color=colors[l],
                    linewidth=2.5 if l.startswith("rivet") else 1.5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("input size (MB)")
        ax.set_ylabel("wall time (s, median)")
    else:
        width = 0.8 / max(1, len(linkers))
        for i, l in enumerate(linkers):
            xs, ys, lo, hi = [], [], [], []
            for j, job in enumerate(jobs):
                r = next((r for r in rows if r["job"] == job and r["linker"] == l), None)
                if r is None:
                    continue
                best = min(x["median"] for x in rows if x["job"] == job)
                xs.append(j + i * width)
                ys.append(r["median"] / best)
                lo.append((r["median"] - r["min"]) / best)
                hi.append((r["max"] - r["median"]) / best)
            ax.bar(xs, ys, width, yerr=[lo, hi], label=l, color=colors[l], capsize=2,
                   edgecolor="black" if l.startswith("rivet") else None)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(jobs))])
        ax.set_xticklabels(jobs)
        ax.axhline(1.0, color="gray", linewidth=0.8)
        ax.set_ylabel("wall time / fastest (median; lower is better)")
    ax.set_title(f"{data['scenario']}: {data['header'][:90]}", fontsize=8)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    plot(sys.argv[1], sys.argv[2])
