"""Exceptions ccfair raises to its callers.

Two kinds, so that a caller (and the CLI) can tell "you wrote something
wrong" from "the engine failed":

* :class:`SpecError` -- the experiment description, a ``--set`` override or
  an input file is wrong. It names the offending field as a dotted path
  (``flows.1.cca``) and says what is allowed. The CLI prints it as one line
  and exits with status 2.
* :class:`SimulationError` -- the simulator could not run (extension not
  built, or it rejected the translated configuration, which is a bug in
  ccfair rather than in the experiment file).
"""

from __future__ import annotations


class SpecError(ValueError):
    """A problem with the experiment description, named by its dotted field path.

    Attributes:
        field: dotted path of the offending field (``"flows.1.cca"``), a file
            name, or ``""`` when the problem concerns the whole input.
        message: what is wrong and what is allowed.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)


class SimulationError(RuntimeError):
    """The simulator failed or is unavailable (wraps ``ccfair._core`` exceptions)."""
