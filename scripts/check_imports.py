#!/usr/bin/env python3
"""Fail if the import graph of python/ccfair or of a Rust crate has a cycle.

Dependencies point one way (docs/architecture.md): spec -> scenario ->
backend -> result -> metrics -> store/plots/report. This script builds the
graph and prints every cycle (a strongly connected component with more than
one node).

* Python: one node per module of ``ccfair`` (a package's submodules are their
  own nodes). Every ``import ccfair.x`` / ``from ccfair import x`` counts,
  module level or inside a function; imports under ``if TYPE_CHECKING:``
  (type annotations only) do not.
* Rust: one node per top-level module of a crate (``config``, ``qdisc``,
  ``cc``, ``sim``, ...; a module's files form one node, so a registry in
  ``cc/mod.rs`` naming ``cc/cubic.rs`` is not a cycle). Every path
  ``crate::m`` or ``ccfair_sim::m`` in a file counts, tests included.

Usage: python3 scripts/check_imports.py  (exit 1 and the cycles on stderr if any).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_graph(pkg_dir: Path, pkg: str = "ccfair") -> dict[str, set[str]]:
    """Module -> modules of ``pkg`` it imports."""
    modules = {}
    for f in pkg_dir.rglob("*.py"):
        parts = f.relative_to(pkg_dir.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = f
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, f in modules.items():
        tree = ast.parse(f.read_text(), str(f))
        skip = _type_checking_nodes(tree)
        is_pkg = f.name == "__init__.py"
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, name, is_pkg)
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            for t in targets:
                dep = _known(t, modules)
                if dep and dep != name and not name.startswith(dep + "."):
                    graph[name].add(dep)
    return graph


def _absolute(node: ast.ImportFrom, module: str, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_pkg else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _known(target: str, modules: dict[str, Path]) -> str | None:
    """The longest known module that ``target`` names (``ccfair.spec.Spec`` -> ``ccfair.spec``)."""
    parts = target.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in modules:
            return cand
    return None


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of every node inside an ``if TYPE_CHECKING:`` block."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                out.update(id(n) for n in ast.walk(child))
    return out


_RUST_PATH = re.compile(r"\b(?:crate|{crate})::([a-z_][a-z0-9_]*)")


def rust_graph(src: Path, crate: str) -> dict[str, set[str]]:
    """Top-level module -> top-level modules of the same crate it names."""
    pattern = re.compile(_RUST_PATH.pattern.replace("{crate}", crate))
    top = {p.stem for p in src.glob("*.rs") if p.stem not in ("lib", "main")} | {
        p.name for p in src.iterdir() if p.is_dir() and p.name != "bin"
    }
    graph: dict[str, set[str]] = {m: set() for m in top}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).parts
        if rel[0] == "bin" or rel[0] in ("lib.rs", "main.rs"):
            continue
        node = rel[0].removesuffix(".rs")
        text = re.sub(r"//[^\n]*", "", f.read_text())  # comments and doc links are not dependencies
        for m in pattern.findall(text):
            if m in top and m != node:
                graph[node].add(m)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def edges_within(graph: dict[str, set[str]], comp: list[str]) -> list[str]:
    return [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]


def all_cycles(root: Path = ROOT) -> dict[str, list[list[str]]]:
    """{graph name: its cycles} for python/ccfair and every crate under crates/."""
    graphs = {"python/ccfair": python_graph(root / "python" / "ccfair")}
    for crate in sorted((root / "crates").iterdir()):
        if (crate / "src").is_dir():
            graphs[str(crate.relative_to(root))] = rust_graph(crate / "src", crate.name.replace("-", "_"))
    return {name: [edges_within(g, c) for c in cycles(g)] for name, g in graphs.items()}


def main() -> int:
    found = {k: v for k, v in all_cycles().items() if v}
    for name, cs in found.items():
        for c in cs:
            print(f"import cycle in {name}: " + "; ".join(c), file=sys.stderr)
    if not found:
        print("no import cycles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
