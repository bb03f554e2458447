"""The import graphs of python/ccfair and of every crate have no cycles (scripts/check_imports.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("check_imports", ROOT / "scripts" / "check_imports.py")
assert _spec is not None and _spec.loader is not None
check_imports = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_imports)


def test_the_repository_has_no_import_cycle():
    assert check_imports.all_cycles(ROOT) == {name: [] for name in check_imports.all_cycles(ROOT)}


def test_a_python_cycle_is_found_even_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.a import x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n")
    (pkg / "d.py").write_text("from pkg import c\n")
    graph = check_imports.python_graph(pkg, "pkg")
    assert check_imports.cycles(graph) == [["pkg.a", "pkg.b"]]
    assert "pkg.a" not in graph["pkg.c"]  # annotations only


def test_a_rust_cycle_between_top_level_modules_is_found(tmp_path):
    src = tmp_path / "src"
    (src / "cc").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod cc;\npub mod config;\npub mod sim;\n")
    (src / "cc" / "mod.rs").write_text("pub mod cubic;\nuse crate::config::X;\n")
    (src / "cc" / "cubic.rs").write_text("use super::Cc; // a child naming its parent is not a dependency\n")
    (src / "config.rs").write_text("/// see [`crate::sim`]\npub fn f() { crate::cc::make(); }\n")
    (src / "sim.rs").write_text("use crate::config;\n")
    graph = check_imports.rust_graph(src, "demo")
    assert check_imports.cycles(graph) == [["cc", "config"]]
    assert graph["config"] == {"cc"}  # the doc comment's path is not a dependency
