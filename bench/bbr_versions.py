"""BBRv1, BBRv2 and BBRv3 against CUBIC at S0's base case, shallow and deep buffer.

examples/s0-cubic-vs-bbr.toml (10 Mbit/s, 50 ms, drop-tail, 45 s, window
10-45 s, second flow 5 s after the first) with the buffer at 0.5 and 8 BDP,
each BBR version against CUBIC, both start orders, seeds 1..N. Prints a
Markdown table of the BBR flow's share of the delivered bytes (mean, min,
max) and writes the figure of every run's share.

    python bench/bbr_versions.py [--seeds 10] [--jobs 2] [--out docs/figures/bbr-versions-vs-cubic]

The output is recorded in docs/ccas.md (BBRv3).
"""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import ccfair
import matplotlib.pyplot as plt
from ccfair import Spec, plots

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "s0-cubic-vs-bbr.toml"
VERSIONS = ["bbr", "bbr2", "bbr3"]
BUFFERS = ["0.5bdp", "8bdp"]


def bbr_share(bbr: str, buffer: str, bbr_first: bool, seed: int) -> float:
    """The BBR flow's share of the bytes delivered in the analysis window."""
    first, second = (bbr, "cubic") if bbr_first else ("cubic", bbr)
    spec = Spec.from_toml(EXAMPLE).with_overrides([f"bottleneck.buffer={buffer}", f"flows.0.cca={first}", f"flows.1.cca={second}"])
    flows = ccfair.run(spec, seed=seed).flows
    return float(flows.loc[flows["cca"] == bbr, "share"].iloc[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="docs/figures/bbr-versions-vs-cubic")
    args = ap.parse_args()
    cases = [(v, b, o, s) for b in BUFFERS for v in VERSIONS for o in (True, False) for s in range(1, args.seeds + 1)]
    with ThreadPoolExecutor(args.jobs) as ex:
        shares = dict(zip(cases, ex.map(lambda c: bbr_share(*c), cases), strict=True))

    print("| buffer | BBR version | BBR first: mean share (min-max) | CUBIC first: mean share (min-max) |")
    print("|---|---|---|---|")
    for b in BUFFERS:
        for v in VERSIONS:
            cells = []
            for o in (True, False):
                xs = [shares[(v, b, o, s)] for s in range(1, args.seeds + 1)]
                cells.append(f"{statistics.mean(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})")
            print(f"| {b} | {v} | {cells[0]} | {cells[1]} |")

    fig, axes = plt.subplots(1, len(BUFFERS), figsize=(8, 3.4), sharey=True)
    for ax, b in zip(axes, BUFFERS, strict=True):
        for i, v in enumerate(VERSIONS):
            for j, o in enumerate((True, False)):
                xs = [shares[(v, b, o, s)] for s in range(1, args.seeds + 1)]
                x = i + (j - 0.5) * 0.3
                ax.scatter([x] * len(xs), xs, s=14, color=plots.cca_color(v), marker="o" if o else "^", alpha=0.8)
                ax.plot([x - 0.1, x + 0.1], [statistics.mean(xs)] * 2, color="k", lw=1)
        ax.axhline(0.5, color="grey", lw=0.8, ls=":")
        ax.set_xticks(range(len(VERSIONS)), ["BBRv1", "BBRv2", "BBRv3"])
        ax.set_title(f"vs CUBIC, buffer {b.replace('bdp', ' BDP')}")
        ax.set_ylim(0, 1)
    axes[0].set_ylabel("BBR flow's share of bytes")
    handles = [
        plt.Line2D([], [], marker="o", ls="", color="grey", label="BBR starts first"),
        plt.Line2D([], [], marker="^", ls="", color="grey", label="CUBIC starts first"),
    ]
    axes[-1].legend(handles=handles, loc="upper right", fontsize=8)
    fig.suptitle(f"S0 base case (10 Mbit/s, 50 ms, drop-tail), seeds 1-{args.seeds}", fontsize=9)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{args.out}.{ext}", dpi=120)
    print(f"\nfigure: {args.out}.png/.svg")


if __name__ == "__main__":
    main()
