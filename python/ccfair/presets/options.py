"""The command-line options the argparse presets (s0, s2, s3, s4) share."""

from __future__ import annotations

import argparse


def add_run_options(ap: argparse.ArgumentParser, jobs_help: str, json_help: str | None = None, bbr3_help: str | None = None) -> None:
    """``--jobs N`` (parallel processes); with a help text each, ``--json`` (one JSON object on
    stdout) and ``--bbr3 / --no-bbr3`` (the study again with BBRv3, default on)."""
    ap.add_argument("--jobs", type=int, default=1, help=jobs_help)
    if json_help:
        ap.add_argument("--json", action="store_true", help=json_help)
    if bbr3_help:
        ap.add_argument("--bbr3", action=argparse.BooleanOptionalAction, default=True, help=bbr3_help)
