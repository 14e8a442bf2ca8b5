"""PNG plots for the LoCoMo HTTP benchmark, drawn from its results (bench/results/locomo.json) with matplotlib.

- `locomo_recall_budget.png`: recall in the window vs the token budget, one panel per question category and one
  for "all but 5", a line per embedder and the most-recent-turns baseline.
- `locomo_latency.png`: client-side latency percentiles (p50, p90, p95, p99) of the context call and of search,
  per embedder (milliseconds, log scale).

usage: python bench/plots.py [bench/results/locomo.json] [--to docs/benchmarks]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:   # `from bench import ...` when run as a script
    sys.path.insert(0, str(ROOT))
PANELS = [("multi_hop", "multi-hop (1)"), ("temporal", "temporal (2)"), ("open_domain", "open-domain (3)"),
          ("single_hop", "single-hop (4)"), ("adversarial", "adversarial (5)"), ("all_but_5", "all but 5")]
QUANTILES = [50, 90, 95, 99]


def _pct(values: list[float], q: float) -> float:
    from bench.locomo import pct
    return pct(values, q)


def recall_vs_budget(out: dict, path: Path) -> Path:
    """One panel per category: recall_in_window (percent) vs budget (tokens) for each run and the baseline."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    budgets = out["parameters"]["budgets"]
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), sharex=True, sharey=True)
    series = [(f"graphmem, embedder={emb}", r["context"], "o-") for emb, r in out["runs"].items()]
    series.append(("most recent turns", out["baselines"]["recent_turns"], "s--"))
    for ax, (cat, title) in zip(axes.flat, PANELS):
        for label, res, style in series:
            ys = [res[str(b)].get("recall_in_window", {}).get(cat, {}).get("percent") for b in budgets]
            if any(y is not None for y in ys):
                ax.plot(budgets, [y if y is not None else float("nan") for y in ys], style, label=label)
        n = out["baselines"]["recent_turns"][str(budgets[0])]["recall_in_window"].get(cat, {}).get("n", 0)
        ax.set_title(f"{title}  (n={n})", fontsize=11)
        ax.set_xticks(budgets)
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("context budget (tokens)")
    for ax in axes[:, 0]:
        ax.set_ylabel("evidence recall in window (%)")
    handles, labels = axes.flat[-1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle("LoCoMo: evidence turns present in the context window, by budget (HTTP, fresh session per question)")
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def latency_percentiles(out: dict, path: Path) -> Path:
    """Grouped bars: p50/p90/p95/p99 (ms, client-side) of the context call and of search, per embedder."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = []
    for emb, r in out["runs"].items():
        s = r.get("latency_samples_ms", {})
        groups.append((f"context call\nembedder={emb}", s.get("context_client", [])))
        groups.append((f"search\nembedder={emb}", s.get("search_client", [])))
    fig, ax = plt.subplots(figsize=(max(8, 2.6 * len(groups)), 5))
    width = 0.8 / len(QUANTILES)
    for i, q in enumerate(QUANTILES):
        xs = [g + (i - (len(QUANTILES) - 1) / 2) * width for g in range(len(groups))]
        ys = [_pct(v, q) for _, v in groups]
        bars = ax.bar(xs, ys, width, label=f"p{q}")
        ax.bar_label(bars, fmt="%.0f", fontsize=8, padding=2)
    ax.set_xticks(range(len(groups)), [g for g, _ in groups])
    ax.set_yscale("log")
    ax.set_ylabel("latency (ms, client-side, loopback; log scale)")
    workers = out["parameters"].get("workers", 1)
    ax.set_title(f"LoCoMo run: client-side latency percentiles\n({workers} conversation(s) at a time, "
                 f"{out['machine']['cpus']} shared CPUs)", fontsize=11)
    ax.legend(frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def render(out: dict, to: Path) -> list[Path]:
    """Both plots into directory `to`; returns their paths."""
    to.mkdir(parents=True, exist_ok=True)
    return [recall_vs_budget(out, to / "locomo_recall_budget.png"), latency_percentiles(out, to / "locomo_latency.png")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="?", type=Path, default=ROOT / "bench/results/locomo.json")
    ap.add_argument("--to", type=Path, default=ROOT / "docs/benchmarks")
    a = ap.parse_args()
    for p in render(json.loads(a.results.read_text()), a.to):
        print(p)


if __name__ == "__main__":
    main()
