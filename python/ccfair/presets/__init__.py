"""Ready-made evaluations of the source studies: ``ccfair preset <name>``.

Each preset builds its experiments programmatically (flows drawn from the
seed), runs them and prints its figures next to the published ones:

- ``ccfair preset s0 ...``: S0's lab, lab-vs-CP-like and CP-like-vs-CP-like fness grid
  with its claims, see presets/s0.py (``ccfair preset s0 --help``);
- ``ccfair preset s1 ...``: RRMQS + flow meter + feedback (S1), see presets/s1.py;
- ``ccfair preset s2 ...``: BBR vs CUBIC A/B on three CDN traffic classes (S2), presets/s2.py;
- ``ccfair preset s3 ...``: BBRv2/DCTCP over STEP, PI2, CSAQM (S3), see presets/s3.py
  (``ccfair preset s3 --help`` lists its options);
- ``ccfair preset s4 ...``: pair-wise J/NRU vs CCID2 and the 14-flow simulation (S4), presets/s4.py.

Presets that take part in ``ccfair reproduce`` also provide ``tasks``,
``run_task``, ``measure`` and ``figures`` (see ccfair.reproduce).
"""

from __future__ import annotations

import typer

app = typer.Typer(help="Run a study's evaluation as published (presets).", no_args_is_help=True, rich_markup_mode=None)

from ccfair.presets import s1 as _s1  # noqa: E402

_s1.register(app)


def _argparse_command(name: str, help_text: str) -> None:
    """Register ``ccfair preset NAME`` forwarding its arguments to ``ccfair.presets.NAME.main`` (argparse)."""

    @app.command(name, help=help_text, context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []})
    def _cmd(ctx: typer.Context) -> None:
        import importlib

        mod = importlib.import_module(f"ccfair.presets.{name}")
        try:
            code = mod.main(list(ctx.args))
        except SystemExit as e:  # argparse: --help (0) or a usage error (2)
            code = e.code if isinstance(e.code, int) else 2
        if code:
            raise typer.Exit(code)


#: The presets whose own ``main`` parses their arguments (argparse), with each one's help line.
ARGPARSE_PRESETS = {
    "s0": "S0: fness of lab CCAs and CP-like sender profiles over S0's grid, each S0 claim with a verdict (options: --help).",
    "s2": "S2: BBR vs CUBIC A/B on client / PoP-to-PoP / intra-PoP traffic with random loss, drop-tail and fq_codel (options: --help).",
    "s3": "S3: relative throughput, utilization, delay, marks and JFI of BBRv2/DCTCP mixes over STEP, PI2 and CSAQM (options: --help).",
    "s4": "S4: pair-wise J, J(t), NRU vs CCID2 and the 14-flow, 14-CCA simulation (options: --help).",
}
for _name, _help in ARGPARSE_PRESETS.items():
    _argparse_command(_name, _help)
