"""The testbed backend: the same experiment on real Linux TCP in network namespaces.

``ccfair.testbed.run(spec, seed)`` returns the same :class:`~ccfair.result.Result`
as the simulator. See docs/testbed.md for how it is built and its limits.
"""

from __future__ import annotations

from ccfair.testbed.runner import TestbedError, TestbedUnavailable, check_available, kernel_ccas, run

__all__ = ["TestbedError", "TestbedUnavailable", "check_available", "kernel_ccas", "run"]
