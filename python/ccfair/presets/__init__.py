"""Ready-made evaluations of the source studies: ``ccfair preset <name>``.

Each preset module builds its experiments programmatically (flows drawn from
the seed), runs them and prints its figures next to the published ones.
"""

from __future__ import annotations

import typer

app = typer.Typer(help="Run a study's evaluation as published (presets).", no_args_is_help=True)

from ccfair.presets import s1 as _s1  # noqa: E402

_s1.register(app)
