"""Strict scalar types of the experiment description (pydantic).

TOML has its own booleans, integers and floats, and an experiment file means
exactly what it writes: ``pacing = "yes"`` or ``pacing = 1`` is an error, not
``true``; ``rwnd = true`` or ``rwnd = "5"`` is not an integer; a float field
takes integers and floats, never a boolean, a string or a non-finite number.
Every model of the experiment file (spec.py, traffic.py) uses these instead
of pydantic's lax ``bool`` / ``int`` / ``float``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, Strict, StrictBool, StrictInt

__all__ = ["Bool", "Int", "Float", "U32", "U32_MAX"]

#: ``true`` or ``false`` only.
Bool = StrictBool
#: An integer only (no boolean, float or string).
Int = StrictInt
#: A finite number (integers accepted, no boolean or string).
Float = Annotated[float, Strict(), Field(allow_inf_nan=False)]
#: The engine's unsigned 32-bit fields (crates/ccfair-sim/src/config.rs); each field may narrow it.
U32_MAX = 2**32 - 1
U32 = Annotated[int, Strict(), Field(ge=0, le=U32_MAX)]
