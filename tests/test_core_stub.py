"""python/ccfair/_core.pyi says what the built extension has: the same public names, and for every
function the same parameters with the same defaults (PyO3's text signatures)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

core = pytest.importorskip("ccfair._core", reason="the compiled simulator is not built")

STUB = Path(__file__).resolve().parents[1] / "python" / "ccfair" / "_core.pyi"


def _stub() -> tuple[dict[str, ast.FunctionDef], set[str]]:
    tree = ast.parse(STUB.read_text())
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    others = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    others |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return funcs, others


def _public(module) -> set[str]:
    return {n for n in dir(module) if not n.startswith("_") or n == "__version__"}


def test_the_stub_names_exactly_the_extensions_public_names():
    funcs, others = _stub()
    assert set(funcs) | others == _public(core)


def _stub_params(f: ast.FunctionDef) -> list[tuple[str, str | None]]:
    args = f.args.args
    defaults = [None] * (len(args) - len(f.args.defaults)) + [ast.unparse(d) for d in f.args.defaults]
    return [(a.arg, d) for a, d in zip(args, defaults)]


def _real_params(fn) -> list[tuple[str, str | None]]:
    sig = inspect.signature(fn)
    return [(p.name, None if p.default is inspect.Parameter.empty else repr(p.default)) for p in sig.parameters.values()]


@pytest.mark.parametrize("name", sorted(_stub()[0]))
def test_each_function_has_the_extensions_parameters_and_defaults(name):
    assert _stub_params(_stub()[0][name]) == _real_params(getattr(core, name)), name


def test_exceptions_derive_as_the_stub_says():
    assert issubclass(core.SimConfigError, ValueError) and issubclass(core.SimValueError, ValueError)
    assert issubclass(core.SimResourceError, MemoryError)
