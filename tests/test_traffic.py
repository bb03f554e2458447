"""Finite flows, Poisson flow groups, size distributions, rate caps, random loss (S2)."""

from __future__ import annotations

import ccfair
import numpy as np
import pytest
from ccfair.errors import SpecError
from ccfair.spec import Spec
from ccfair.traffic import Group, RateDist, SizeDist, expand_group


def _group(**kw):
    base = {"name": "web", "cca": "cubic", "rtt": "20ms", "arrival_rate": 50, "size": "100KB"}
    base.update(kw)
    return Group.model_validate(base)


def test_poisson_arrivals_count_and_mean_gap():
    # N(100 s) ~ Poisson(5000): sd ~ 71; inter-arrival mean 1/50 s.
    flows = expand_group(_group(), 0, seed=1, duration_ns=100 * 10**9)
    n = len(flows)
    assert abs(n - 5000) < 4 * 71
    starts = np.array([f["start_ns"] for f in flows])
    assert np.all(np.diff(starts) >= 0)
    assert abs(np.diff(starts).mean() / 1e9 - 1 / 50) < 0.002


def test_expansion_is_deterministic_per_seed():
    g = _group(size={"dist": "lognormal", "median": "100KB", "sigma": 1.0})
    a = expand_group(g, 0, seed=7, duration_ns=10 * 10**9)
    b = expand_group(g, 0, seed=7, duration_ns=10 * 10**9)
    c = expand_group(g, 0, seed=8, duration_ns=10 * 10**9)
    assert a == b
    assert a != c


def test_size_distributions_match_their_parameters():
    rng = np.random.Generator(np.random.PCG64(1))
    assert set(SizeDist(dist="fixed", value=3_000_000).sample(rng, 10)) == {3_000_000}
    u = SizeDist(dist="uniform", min=10_000, max=100_000).sample(rng, 20_000)
    assert u.min() >= 10_000 and u.max() <= 100_000
    assert abs(u.mean() - 55_000) < 1_000  # sd of the mean ~ 184
    ln = SizeDist(dist="lognormal", median=100_000, sigma=1.5).sample(rng, 20_000)
    assert abs(np.median(ln) / 100_000 - 1) < 0.05


def test_empirical_cdf_inverse_transform(tmp_path):
    f = tmp_path / "cdf.csv"
    f.write_text("size_bytes,cdf\n1000,0\n2000,0.5\n10000,1\n")
    s = SizeDist(dist="empirical", file=str(f)).sample(np.random.Generator(np.random.PCG64(2)), 20_000)
    assert s.min() >= 1000 and s.max() <= 10000
    assert abs(np.mean(s <= 2000) - 0.5) < 0.02


def test_uniform_rate_caps_within_bounds():
    caps = RateDist(dist="uniform", min=10_000, max=1_000_000).sample(np.random.Generator(np.random.PCG64(3)), 1000)
    assert caps.min() >= 10_000 and caps.max() <= 1_000_000


@pytest.mark.parametrize(
    "group, field",
    [
        ({"size": {"dist": "uniform", "min": "10KB"}}, "max"),
        ({"size": {"dist": "pareto", "value": "1KB"}}, "dist"),
        ({"arrival_rate": 0}, "arrival_rate"),
        ({"loss": 1.0}, "loss"),
        ({"cca": "nope"}, "cca"),
    ],
)
def test_bad_groups_name_the_field(group, field):
    spec = {"duration": "10s", "bottleneck": {"rate": "10Mbit"}, "groups": [dict(_group().model_dump(mode="json"), **group)]}
    with pytest.raises(SpecError) as e:
        Spec.from_dict(spec)
    assert field in str(e.value)


def test_rate_capped_finite_flow_completes_at_its_rate():
    # 3 MB at 4 Mbit/s on an idle 50 Mbit/s link: FCT ~ 3e6 * 8 / 4e6 = 6.0 s
    # (plus the handshake and one RTT).
    spec = Spec.from_dict(
        {
            "duration": "10s",
            "bottleneck": {"rate": "50Mbit"},
            "flows": [{"name": "v", "cca": "cubic", "rtt": "50ms", "size": "3MB", "rate_cap": "4Mbit"}],
        }
    )
    r = ccfair.run(spec)
    assert int(r.throughput["bytes"].sum()) == 3_000_000
    fct = float(r.flows["fct_s"][0])
    assert 6.0 < fct < 6.2
    g = r.summary["fct"]["v"]
    assert g["completed"] == 1
    # ideal = RTT + 6.0 s: a capped flow completes within a few % of it.
    assert abs(g["slowdown"]["mean"] - 1.0) < 0.03


def test_groups_run_end_to_end_with_per_class_fct():
    spec = Spec.from_dict(
        {
            "duration": "10s",
            "bottleneck": {"rate": "50Mbit", "buffer": "1bdp"},
            "flows": [{"name": "bulk", "cca": "bbr", "rtt": "50ms", "loss": 0.001}],
            "groups": [
                {"name": "web", "cca": "cubic", "rtt": "20ms", "arrival_rate": 10, "size": "50KB", "stop": "8s"},
            ],
        }
    )
    r = ccfair.run(spec, seed=2)
    web = r.flows[r.flows["group"] == "web"]
    assert len(web) > 50
    assert (web["size_bytes"] == 50_000).all()
    assert r.summary["fct"]["web"]["completed"] == int(web["fct_s"].notna().sum()) > 0
    # Random loss hits only the lossy flow.
    assert int(r.flows.loc[r.flows["name"] == "bulk", "random_losses"].iloc[0]) > 0
    assert int(web["random_losses"].sum()) == 0
