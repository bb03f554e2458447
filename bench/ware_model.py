"""Ware et al.'s BBR model over ccfair's measured BBR share vs buffer (1 BBR vs 1 and 4 CUBIC).

Reads the sweep of examples/ware-bbr-vs-cubic.toml, prints measured mean
shares next to the model (ccfair.models.ware_bbr_share) as a Markdown table
and writes the figure (the same one `ccfair report` draws for the sweep).

    ccfair sweep examples/ware-bbr-vs-cubic.toml --out ware --jobs 2
    python bench/ware_model.py ware [--out docs/figures/ware-bbr-share]

The output is recorded in docs/models.md.
"""

from __future__ import annotations

import argparse

from ccfair import load_sweep, models, plots, report, units


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory")
    ap.add_argument("--out", default="docs/figures/ware-bbr-share")
    args = ap.parse_args()
    fig = report.ware_overlay_figure(args.directory)
    if fig is None:
        raise SystemExit(f"{args.directory}: not a BBR/CUBIC buffer sweep")
    plots.save(fig, args.out)

    runs = load_sweep(args.directory)
    flows = load_sweep(args.directory, table="flows").merge(runs, on="run_id")
    bbr = flows[flows["cca"] == "bbr"].assign(x=lambda d: [float(units.parse_buffer(b).value) for b in d["bottleneck.buffer"]])
    table = bbr.groupby(["x", "flows.1.count"])["share"].agg(["mean", "min", "max"]).unstack()
    # 10 Mbit/s, 40 ms, analysis window 60-300 s (d = 240 s), as the example file.
    print("| buffer (BDP) | model (eq. 9-11) | 1 BBR vs 1 CUBIC: mean (min-max) | 1 BBR vs 4 CUBIC: mean (min-max) |")
    print("|---|---|---|---|")
    for x in table.index:
        model = float(models.ware_bbr_share(x, 10e6, 0.040, duration_s=240))
        cells = [f"{table.loc[x, ('mean', n)]:.3f} ({table.loc[x, ('min', n)]:.3f}-{table.loc[x, ('max', n)]:.3f})" for n in (1, 4)]
        print(f"| {x:g} | {model:.3f} | {cells[0]} | {cells[1]} |")
    print(f"\nfigure: {args.out}.png/.svg")


if __name__ == "__main__":
    main()
