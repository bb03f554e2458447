"""Every figure function returns a Figure with the expected axes/artists and saves non-empty PNG and SVG."""

from __future__ import annotations

import math
from pathlib import Path

import ccfair
import numpy as np
import pandas as pd
import pytest
from ccfair import ccas, plots
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

ROOT = Path(__file__).resolve().parents[1]


def check_saved(fig: Figure, tmp_path, name: str) -> None:
    paths = plots.save(fig, tmp_path / "figs" / name)
    assert [p.suffix for p in paths] == [".png", ".svg"]
    png, svg = paths
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2000
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and len(text) > 2000


def test_gaussian_kde_scotts_rule():
    # values (0, 1): s = 0.7071, h = s * 2^(-1/5) = 0.6156; at x = 0.5 both kernels give phi(0.5/h)/h
    h = math.sqrt(0.5) * 2 ** (-0.2)
    expected = math.exp(-0.5 * (0.5 / h) ** 2) / (h * math.sqrt(2 * math.pi))
    assert plots.gaussian_kde([0.0, 1.0], [0.5])[0] == pytest.approx(expected)
    grid = np.linspace(-10, 10, 4001)
    dens = plots.gaussian_kde(np.random.default_rng(1).normal(size=200), grid)
    assert np.trapezoid(dens, grid) == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError):
        plots.gaussian_kde([1.0], grid)
    with pytest.raises(ValueError):
        plots.gaussian_kde([1.0, 1.0], grid)


def test_bounded_kde_keeps_its_mass_inside_the_domain():
    # Two runs near +1: an unbounded KDE puts a large part of its mass above 1
    # (densities spilling past fness 1); reflected at the bounds (Silverman 1986, 2.10) the
    # density integrates to 1 over [-1, 1] and is 0 outside.
    vals = [0.95, 0.99, 0.9]
    grid = np.linspace(-1.5, 1.5, 30001)
    step = grid[1] - grid[0]
    free = plots.gaussian_kde(vals, grid)
    inside = (grid >= -1) & (grid <= 1)
    # unbounded: the mass above 1 is the mean Gaussian tail beyond 1, 1 - Phi((1 - x) / h)
    h = float(np.std(vals, ddof=1)) * len(vals) ** (-1 / 5)
    tail = np.mean([0.5 * math.erfc((1 - x) / (h * math.sqrt(2))) for x in vals])
    assert free[grid > 1].sum() * step == pytest.approx(tail, abs=2e-3)
    assert tail > 0.1
    dens = plots.gaussian_kde(vals, grid, bounds=(-1.0, 1.0))
    assert dens[~inside].max() == 0.0
    assert dens[inside].sum() * step == pytest.approx(1.0, abs=2e-3)


def test_trace_plots_draw_one_line_per_flow(tmp_path):
    spec = ccfair.Spec.from_toml(ROOT / "examples" / "s0-cubic-vs-bbr.toml").with_overrides(
        ["trace=true", "duration=6s", "window.end=6s", "window.start=1s"]
    )
    r = ccfair.run(spec)
    for what, (col, _, div) in plots.TRACE_SERIES.items():
        fig = plots.trace_over_time(r, what)
        lines = [ln for ln in fig.axes[0].get_lines() if ln.get_label() != "link rate"]
        assert len(lines) == 2, what
        first = r.trace[r.trace["flow"] == "A"][col].to_numpy() / div
        assert np.allclose(lines[0].get_ydata(), first), what
        check_saved(fig, tmp_path, what)


def test_cca_colors_are_stable():
    assert plots.cca_color("cubic") == plots.cca_color("CUBIC") == ccas.colour("cubic") == "#0072B2"
    assert plots.cca_color("cubic+pacing") == ccas.colour("cubic", paced=True) == "#56B4E9"
    assert plots.cca_color("ctcp") == "#17becf"  # the registry's colour, by its canonical name
    assert plots.cca_color("cubic") != plots.cca_color("bbr")
    assert plots.cca_color("someday-cca") == plots.cca_color("someday-cca")


def test_throughput_over_time_from_result(fake_sim, s0_dict, tmp_path):
    r = ccfair.run(s0_dict)
    fig = plots.throughput_over_time(r)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    flows = [ln for ln in ax.get_lines() if not ln.get_label().startswith("link rate")]
    assert len(flows) == 2  # one line per flow
    a, b = flows
    rate = [ln for ln in ax.get_lines() if ln.get_label().startswith("link rate")]
    assert len(rate) == 1 and rate[0].get_ydata()[0] == pytest.approx(r.config["bottleneck"]["rate_bps"] / 1e6)
    assert "exceed the link rate" in fig.get_supxlabel()  # the caption says why a bin can
    assert a.get_color() == plots.cca_color("cubic") and b.get_color() == plots.cca_color("bbr")
    # fake core: B delivers 2000 B per 100 ms = 0.16 Mbit/s
    assert b.get_ydata()[-1] == pytest.approx(0.16)
    assert "Mbit/s" in ax.get_ylabel() and "(s)" in ax.get_xlabel()
    assert {t.get_text() for t in ax.get_legend().get_texts()} >= {"A (cubic)", "B (bbr)"}
    check_saved(fig, tmp_path, "throughput")


def test_throughput_over_time_many_flows_are_summed_per_cca(tmp_path):
    rows = [
        {"flow": f"f{i}", "cca": "cubic" if i % 2 else "bbr", "time_s": t * 0.1, "throughput_bps": 1e6}
        for i in range(20)
        for t in range(10)
    ]
    fig = plots.throughput_over_time(pd.DataFrame(rows))
    lines = fig.axes[0].get_lines()
    assert len(lines) == 2
    assert all(np.allclose(line.get_ydata(), 10.0) for line in lines)  # 10 flows x 1 Mbit/s


def test_queue_delay_over_time_and_hist(fake_sim, s0_dict, tmp_path):
    r = ccfair.run(s0_dict)
    fig = plots.queue_delay_over_time(r)
    assert len(fig.axes) == 1 and len(fig.axes[0].get_lines()) == 2
    assert fig.axes[0].get_ylabel() == "Queueing delay (ms)"
    check_saved(fig, tmp_path, "qdelay")
    fig = plots.queue_delay_hist(r)
    ax = fig.axes[0]
    assert len(ax.patches) == 3  # fake core: three non-empty sojourn bins
    assert sum(p.get_height() for p in ax.patches) == pytest.approx(1.0)
    assert len(ax.get_lines()) == 2  # p50 and p99 markers
    check_saved(fig, tmp_path, "qhist")
    with pytest.raises(ValueError):
        plots.queue_delay_over_time(pd.DataFrame({"time_s": [0.0]}))


def s0_runs() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = []
    for pair, centre in [("cubic vs cubic", 0.0), ("cubic vs bbr", 0.8), ("bbr vs bbr", 0.1)]:
        a, b = pair.split(" vs ")
        for order in ("A first", "B first"):
            for rep in range(30):
                v = float(np.clip(centre + rng.normal(0, 0.1), -1, 1))
                rows.append({"pair": pair, "order": order, "rep": rep, "fness": v, "cca_a": a, "cca_b": b})
    return pd.DataFrame(rows)


def test_fness_scatter_kde(tmp_path):
    runs = s0_runs()
    fig = plots.fness_scatter_kde(runs, pair_col="pair", order_col="order", value_col="fness")
    assert len(fig.axes) == 2  # "A first" and "B first" side by side
    assert [ax.get_title() for ax in fig.axes] == ["A first", "B first"]
    for ax in fig.axes:
        scatters = [c for c in ax.collections if isinstance(c, PathCollection)]
        assert len(scatters) == 3 and all(len(s.get_offsets()) == 30 for s in scatters)
        assert len(ax.get_lines()) == 3 + 1  # a KDE curve per pair + the fair line at 0
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["bbr vs bbr", "cubic vs bbr", "cubic vs cubic"]
    check_saved(fig, tmp_path, "fness")
    # coloured by the winner, one panel without an order column
    fig = plots.fness_scatter_kde(runs[runs.order == "A first"], order_col=None, a_col="cca_a", b_col="cca_b")
    assert len(fig.axes) == 1


def test_jfi_nru_vs_rtt(tmp_path):
    rows = []
    for pair, j0 in [("cubic vs ccid2", 0.8), ("reno vs reno", 0.95)]:
        for rtt in (25, 50, 100, 200):
            for rep in range(5):
                rows.append({"pair": pair, "rtt_ms": rtt, "jfi": j0 - 0.01 * rep, "U_N": -0.5, "U_N+": 1.0, "U_N-": -2.0})
    df = pd.DataFrame(rows)
    fig = plots.jfi_nru_vs_rtt(df)
    assert len(fig.axes) == 2
    j_ax, u_ax = fig.axes
    assert len(j_ax.containers) == 2  # one errorbar series per pair
    assert len(u_ax.containers) == 6  # U_N, U_N+, U_N- per pair
    assert u_ax.get_ylabel() == "NRU (dB)" and j_ax.get_xlabel() == "RTT (ms)"
    check_saved(fig, tmp_path, "s4")
    assert len(plots.jfi_nru_vs_rtt(df.drop(columns=["U_N", "U_N+", "U_N-"])).axes) == 1


def test_relative_throughput_vs(tmp_path):
    rows = [
        {"K": k, "aqm": aqm, "class": cls, "relative_throughput": v, "rep": rep}
        for k in (0.05, 0.17, 0.5, 1, 2)
        for aqm in ("step", "pi2")
        for cls, v in (("dctcp", 1.3), ("bbr2", 0.7))
        for rep in range(3)
    ]
    fig = plots.relative_throughput_vs(pd.DataFrame(rows), "K", group_col="aqm", logx=True)
    assert len(fig.axes) == 2 and all(len(ax.containers) == 2 for ax in fig.axes)
    assert fig.axes[0].get_xscale() == "log"
    check_saved(fig, tmp_path, "s3")


def test_relative_throughput_vs_shows_every_panel_in_full():
    # PI2's panel can go far above STEP's (BBRv2 ~1.9 of its share): the
    # shared y axis must cover the highest point of any panel, not just the first.
    rows = [
        {"K": k, "aqm": aqm, "class": cls, "relative_throughput": v}
        for k in (0.1, 1)
        for aqm, hi in (("step", 1.2), ("pi2", 1.9))
        for cls, v in (("bbr2", hi), ("dctcp", 2 - hi))
    ]
    fig = plots.relative_throughput_vs(pd.DataFrame(rows), "K", group_col="aqm")
    for ax in fig.axes:
        lo, top = ax.get_ylim()
        assert lo == 0 and top >= 1.9


def test_fct_cdf(tmp_path):
    rng = np.random.default_rng(2)
    df = pd.DataFrame(
        {
            "class": ["client"] * 100 + ["pop-to-pop"] * 50,
            "fct_s": np.concatenate([rng.lognormal(0, 0.5, 100), rng.lognormal(-1, 0.3, 50)]),
        }
    )
    fig = plots.fct_cdf(df)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 2
    assert lines[0].get_ydata()[-1] == 1.0 and lines[0].get_ydata()[0] == 0.0
    check_saved(fig, tmp_path, "fct")


def test_heatmap(tmp_path):
    rows = [
        {"rate": r, "buffer": b, "fness": (0.8 if b == 0.5 else 0.2) * (1 if r == 10 else -1), "rep": k}
        for r in (10, 50)
        for b in (0.5, 2)
        for k in range(3)
    ]
    fig = plots.heatmap(pd.DataFrame(rows), x="rate", y="buffer", value="fness")
    assert len(fig.axes) == 2  # the map and its colour bar
    ax = fig.axes[0]
    assert len([im for im in ax.get_images() if isinstance(im, AxesImage)]) == 1
    assert sorted(t.get_text() for t in ax.texts) == ["-0.20", "-0.80", "0.20", "0.80"]
    assert ax.get_images()[0].get_cmap().name == "RdBu_r"  # both signs: diverging, centred on 0
    check_saved(fig, tmp_path, "heat")


def test_save_is_deterministic_and_strips_suffix(tmp_path):
    def figure() -> Figure:
        return plots.fct_cdf(pd.DataFrame({"class": ["a", "a", "b"], "fct_s": [0.1, 0.2, 0.3]}))

    p1 = plots.save(figure(), tmp_path / "x.png")
    assert [p.name for p in p1] == ["x.png", "x.svg"]
    p2 = plots.save(figure(), tmp_path / "y")
    # the same figure built twice gives the same SVG bytes (no date, fixed id salt)
    assert p1[1].read_bytes() == p2[1].read_bytes()


def test_draw_into_existing_axes():
    fig = Figure()
    ax1, ax2 = fig.subplots(1, 2)
    out = plots.fct_cdf(pd.DataFrame({"class": ["a", "a"], "fct_s": [0.1, 0.2]}), ax=ax2)
    assert out is fig and len(ax2.get_lines()) == 1 and not ax1.get_lines()
