"""What-if: the sender host noise of paced flows only (BBR's and any flow with `pacing`), on the simulator.

    python3 bench/fidelity_paced_noise.py NS many-seeds [bench/fidelity_many_seeds.py's options]
    python3 bench/fidelity_paced_noise.py NS fidelity [ccfair fidelity's options]

Runs bench/fidelity_many_seeds.py or `ccfair fidelity` with every paced flow's sender-host noise
mean (`host_jitter_ns`, spec.py HOST_NOISE) set to NS ns and every other flow's, and all ACK noise,
as they are. On the testbed a paced flow's skbs reach the bottleneck on their pacing schedule
within about 10 us (bench/bbr_startup_drops.py --gaps); the model gives every skb 100 us.
"""

from __future__ import annotations

import multiprocessing
import sys


def paced_noise(ns: int) -> None:
    """Make Spec.to_run_config give paced flows ``ns`` of sender noise in this process and its forks."""
    from ccfair import spec

    resolve = spec.Spec.to_run_config

    def to_run_config(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        config = resolve(self, *args, **kwargs)
        for f in config["flows"]:
            if "host_jitter_ns" in f and (str(f.get("cca", "")).startswith("bbr") or f.get("pacing")):
                f["host_jitter_ns"] = ns
        return config

    spec.Spec.to_run_config = to_run_config


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[2] not in ("many-seeds", "fidelity"):
        sys.exit("usage: fidelity_paced_noise.py NS many-seeds|fidelity [options]")
    multiprocessing.set_start_method("fork", force=True)  # the pool's workers inherit the patch
    paced_noise(int(sys.argv[1]))
    if sys.argv[2] == "many-seeds":
        import fidelity_many_seeds

        sys.argv = ["fidelity_many_seeds.py"] + sys.argv[3:]
        fidelity_many_seeds.main()
    else:
        from ccfair.cli import app

        sys.argv = ["ccfair", "fidelity"] + sys.argv[3:]
        app()


if __name__ == "__main__":
    main()
