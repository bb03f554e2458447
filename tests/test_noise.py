"""Host noise: on by default, seeded by the run's seed.

Same seed -> bit-identical results; different seeds -> different results even
for loss-based pairs, which without noise are one number whatever the seed;
``noise = "none"`` keeps the idealized hosts (docs/fidelity.md, "Host noise")."""

from __future__ import annotations

from pathlib import Path

import ccfair
import numpy as np
import pytest
from ccfair.spec import HOST_NOISE, Spec

S0 = Path(__file__).resolve().parent.parent / "examples" / "s0-cubic-vs-bbr.toml"


def pair(a: str, b: str, noise: str | None = None) -> Spec:
    raw = Spec.from_toml(S0).raw
    raw["bottleneck"]["buffer"] = "1bdp"
    raw["flows"][0]["cca"], raw["flows"][1]["cca"] = a, b
    if noise is not None:
        raw["noise"] = noise
    return Spec.from_dict(raw)


@pytest.mark.parametrize("a,b", [("cubic", "cubic"), ("reno", "reno"), ("reno", "cubic"), ("cubic", "bbr")])
def test_default_noise_same_seed_same_bits_and_seeds_differ(a: str, b: str) -> None:
    s = pair(a, b)
    r1, r1b, r2 = ccfair.run(s, seed=1), ccfair.run(s, seed=1), ccfair.run(s, seed=2)
    assert np.array_equal(r1.throughput["bytes"].to_numpy(), r1b.throughput["bytes"].to_numpy())
    assert r1.summary["flows"][1]["share"] == r1b.summary["flows"][1]["share"]
    assert r1.summary["flows"][1]["share"] != r2.summary["flows"][1]["share"]


def test_noise_none_is_the_idealized_host_and_ignores_the_seed_for_loss_based_pairs() -> None:
    s = pair("reno", "reno", noise="none")
    shares = {ccfair.run(s, seed=k).summary["flows"][1]["share"] for k in (1, 2, 3)}
    assert len(shares) == 1
    cfg = s.to_run_config()
    assert all("host_jitter_ns" not in f for f in cfg["flows"])
    assert all(f["host_jitter_ns"] == HOST_NOISE["host_jitter_ns"] for f in pair("reno", "reno").to_run_config()["flows"])


def test_unknown_noise_is_a_spec_error_naming_the_field() -> None:
    raw = pair("reno", "reno").raw
    raw["noise"] = "loud"
    with pytest.raises(ccfair.SpecError) as e:
        Spec.from_dict(raw)
    assert "noise" in str(e.value)
