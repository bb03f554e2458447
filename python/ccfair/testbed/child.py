"""One testbed run in a child process: the one way a campaign (``ccfair sweep --backend
testbed``, its Dask and pool workers) runs an experiment on the testbed.

Why a child process: the testbed runner (runner.py) turns SIGTERM/SIGHUP into its clean-up
with signal handlers, which only the main thread of a process may install, while a Dask
worker runs its tasks in threads; and a run that dies takes only its own process down.

The child is asked to get SIGTERM when the thread that started it dies (Linux
``prctl(PR_SET_PDEATHSIG)``, prctl(2)), so a worker killed at any instant (kill -9
included) takes its testbed run down with it: the runner's SIGTERM path removes the
run's namespaces, links and processes, and every testbed run first removes what dead
runs left (docs/testbed.md, "Robustness"). The child checks, after asking, that its
parent is still the process that started it (a parent that died before the request
would otherwise leave it orphaned for the whole run).

Usage from Python: :func:`run` (returns the :class:`~ccfair.result.Result`); the child
side is ``python -m ccfair.testbed.child SPEC.json SEED OUT_DIR PARENT_PID``.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["run", "GRACE_S"]

#: prctl(2) option: the signal the calling process gets when its parent thread dies.
_PR_SET_PDEATHSIG = 1
#: A child gets this long beyond the experiment's duration (set-up, RTT probes, clean-up)
#: before it is stopped with SIGTERM.
GRACE_S = 120.0
#: After SIGTERM, this long to clean up before SIGKILL.
TERM_WAIT_S = 15.0


def _die_with_parent(parent: int) -> None:
    """SIGTERM to this process when its parent dies; exit now if it already has."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(143)


def run(experiment: dict[str, Any], seed: int, *, workdir: str | Path | None = None) -> Any:
    """Run the experiment (a raw experiment dict, as a sweep task carries it) with ``seed`` on
    the testbed in a child process; return its :class:`~ccfair.result.Result`.

    Raises :class:`~ccfair.testbed.runner.TestbedError` with the child's last error line when
    the run fails, or when it outlives the experiment's duration by :data:`GRACE_S`.
    """
    from ccfair.result import Result
    from ccfair.spec import Spec
    from ccfair.testbed.runner import TestbedError

    duration_s = Spec.from_dict(experiment).to_run_config(seed)["duration_ns"] / 1e9
    with tempfile.TemporaryDirectory(prefix="ccfair-testbed-", dir=workdir) as tmp:
        spec_path, out = Path(tmp) / "spec.json", Path(tmp) / "result"
        spec_path.write_text(json.dumps(experiment))
        argv = [sys.executable, "-m", "ccfair.testbed.child", str(spec_path), str(int(seed)), str(out), str(os.getpid())]
        err_path = Path(tmp) / "stderr"
        with open(err_path, "w") as err:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        try:
            p.wait(timeout=duration_s + GRACE_S)
        except subprocess.TimeoutExpired:
            p.terminate()  # the runner's clean-up path
            try:
                p.wait(timeout=TERM_WAIT_S)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            raise TestbedError(f"the testbed run did not finish within its duration + {GRACE_S:g} s") from None
        finally:
            if p.poll() is None:  # interrupted while waiting: take the run down with us
                p.terminate()
                try:
                    p.wait(timeout=TERM_WAIT_S)
                except subprocess.TimeoutExpired:
                    p.kill()
        if p.returncode != 0:
            lines = err_path.read_text(errors="replace").strip().splitlines()
            raise TestbedError(lines[-1] if lines else f"the testbed run exited with status {p.returncode}")
        return Result.load(out)


def _main(argv: list[str]) -> int:
    spec_path, seed, out, parent = argv
    _die_with_parent(int(parent))
    from ccfair.api import run as api_run
    from ccfair.errors import SimulationError, SpecError
    from ccfair.spec import Spec

    try:
        result = api_run(Spec.from_dict(json.loads(Path(spec_path).read_text())), seed=int(seed), backend="testbed")
    except (SpecError, SimulationError) as e:
        sys.stderr.write(f"{type(e).__name__}: {e}\n")
        return 1
    except KeyboardInterrupt:  # SIGTERM/SIGHUP in the runner: it has cleaned up
        return 143
    result.to_parquet(out)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
