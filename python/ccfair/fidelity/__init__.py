"""Simulator-vs-Linux fidelity map (docs/fidelity.md).

* ``points``: the point sets, declared once in ``data/fidelity/points/<set>.toml``
  (a base experiment plus ``PATH=VALUE`` overrides per point), and the stored
  kernel runs ``data/fidelity/kernel/<set>.jsonl`` (one JSON line per run).
* ``collect``: ``ccfair fidelity collect``, the resumable testbed campaign.
* ``compare``: ``ccfair fidelity``, the simulator recomputed at every stored point
  next to the kernel's runs (table, JSON, HTML heatmap).
"""
