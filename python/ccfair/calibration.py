"""Calibration runs: experiments run to obtain a metric's reference values.

S4's NRU weights are the expected throughput of each CCA in the experiment
itself, so obtaining them means running simulations. That belongs to the
experiment layer (this module uses :func:`ccfair.api.run`), not to
:mod:`ccfair.metrics`, which only computes on results; keeping it here keeps
the import graph one-way (spec -> backend -> result -> metrics).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ccfair.api import as_spec
from ccfair.api import run as default_run
from ccfair.result import Result
from ccfair.spec import Spec

__all__ = ["calibrate_nru_weights"]


def calibrate_nru_weights(
    spec: Any,
    ccas: str | Iterable[str],
    *,
    seeds: Iterable[int] | None = None,
    run: Callable[..., Result] | None = None,
) -> dict[str, float]:
    """S4's NRU weights ``w = 1 / expected throughput`` (1/(bit/s)), from ccfair's own calibration runs.

    For each CCA in ``ccas``, every flow of ``spec`` (a Spec, a TOML path, a
    raw dict or a Result, whose spec is used) is switched to that CCA,
    everything else unchanged, and the experiment is run once per seed
    (default: the spec's seed) with :func:`ccfair.run` (or ``run``). The
    expected throughput is the mean window throughput over all flows and
    runs. Keys are CCA labels as in :func:`flow_labels` (``"newreno"`` is
    stored as ``"reno"``, ``"cubic+pacing"`` stays).
    """
    base = spec.spec if isinstance(spec, Result) else as_spec(spec)
    runner = run if run is not None else default_run
    labels = [ccas] if isinstance(ccas, str) else list(ccas)
    if not labels:
        raise ValueError("calibrate_nru_weights() needs at least one CCA")
    seed_list = [base.seed] if seeds is None else list(seeds)
    if not seed_list:
        raise ValueError("calibrate_nru_weights() needs at least one seed")
    weights: dict[str, float] = {}
    for label in labels:
        raw = base.raw
        for f in raw["flows"]:
            f["cca"] = label
            f.pop("pacing", None)
        raw["name"] = f"{base.name} (NRU calibration: {label})"
        cal = Spec.from_dict(raw)
        key = cal.flows[0].label
        rates: list[float] = []
        for seed in seed_list:
            rates.extend(float(x) for x in runner(cal, seed=seed).flows["throughput_bps"])
        expected = float(np.mean(rates))
        if not expected > 0:
            raise ValueError(f"calibration of {label!r} gave no throughput; cannot weight NRU")
        weights[key] = 1.0 / expected
    return weights
