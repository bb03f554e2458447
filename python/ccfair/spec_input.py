"""Reading an experiment file and applying ``--set`` overrides, before validation.

The raw side of the experiment description (spec.py validates what this returns):
TOML into a dict (every failure a :class:`~ccfair.errors.SpecError` naming the
file; regular files of bounded size and nesting), the one parse-time check every
value passes (nesting depth, integer range), and ``PATH=VALUE``
overrides with their shorthand expansion (``cca = "cubic"`` is a table).
"""

from __future__ import annotations

import copy
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from ccfair.errors import SpecError
from ccfair.units import U64_MAX

#: Largest input file ccfair reads (an experiment file, an empirical CDF file): 16 MiB.
#: Input files must be regular files: a FIFO would block, a device (/dev/zero) never ends.
MAX_INPUT_BYTES = 16 * 2**20
#: Deepest nesting an input may have: arrays, tables and dotted keys (``a.b.c``) together.
#: The deepest an experiment needs is 6 (``sweep.flows.0.cca.beta`` and its list of values);
#: refusing deeper input before parsing keeps the recursive TOML parser and every walk over
#: the result far from Python's recursion limit.
MAX_DEPTH = 32

#: The tokens of TOML text that matter for nesting: comments and strings (skipped), brackets.
_TOKENS = re.compile(
    r"#[^\n]*"
    r'|"""(?:[^"\\]|\\.|"(?!""))*"""'  # multi-line basic string
    r"|'''(?:[^']|'(?!''))*'''"  # multi-line literal string
    r'|"(?:[^"\\\n]|\\.)*"'  # basic string
    r"|'[^'\n]*'"  # literal string
    r"|[\[\]{}]",
    re.DOTALL,
)


def check_nesting(text: str, where: str) -> None:
    """Refuse TOML text whose arrays and inline tables nest deeper than :data:`MAX_DEPTH`, before parsing it."""
    depth = 0
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, m.start()) + 1
                raise SpecError(where, f"arrays and tables nested deeper than {MAX_DEPTH} levels (line {line}); at most {MAX_DEPTH}")
        elif tok in ("]", "}"):
            depth = max(0, depth - 1)


def check_tree(node: Any) -> None:
    """The parse-time checks every input passes before validation, naming the path:

    * nesting at most :data:`MAX_DEPTH` (dotted keys and ``[a.b.c]`` headers nest too);
    * every integer within the engine's widest types (-2^63 .. 2^64-1): ``count = 10^30`` must
      not reach code that counts to it; each field's own, narrower range is declared on the
      field (``strict.U32``, ``Field(le=...)``).

    Iterative (no recursion), so no input can exhaust the interpreter's stack.
    """
    stack: list[tuple[Any, str, int]] = [(node, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            if not -(2**63) <= item <= U64_MAX:
                raise SpecError(path, f"integer {item} is out of range; at most {U64_MAX} (2^64-1)")
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth >= MAX_DEPTH:
            parts = path.split(".")
            shown = path if len(parts) <= 8 else ".".join(parts[:8]) + "..."
            raise SpecError(shown, f"nested deeper than {MAX_DEPTH} levels (tables, arrays, dotted keys); at most {MAX_DEPTH}")
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for k, v in pairs:
            stack.append((v, f"{path}.{k}" if path else str(k), depth + 1))


def read_input_file(path: str | Path, field: str, what: str) -> bytes:
    """The bytes of an input file: a regular file of at most :data:`MAX_INPUT_BYTES`.

    ``field`` is what a :class:`SpecError` names (the file itself, or the setting that gave
    the path); ``what`` says what the file should be ("an experiment file (.toml)").
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise SpecError(field, f"file not found: {path}") from None
    except OSError as e:
        raise SpecError(field, f"cannot read {path}: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise SpecError(field, f"{path} is a directory, expected {what}")
    if not stat.S_ISREG(st.st_mode):
        raise SpecError(field, f"{path} is not a regular file (a pipe, device or socket), expected {what}")
    too_big = f"{path} is larger than {MAX_INPUT_BYTES // 2**20} MiB, the most ccfair reads as {what}"
    if st.st_size > MAX_INPUT_BYTES:
        raise SpecError(field, too_big)
    try:
        with p.open("rb") as fh:
            data = fh.read(MAX_INPUT_BYTES + 1)
    except OSError as e:
        raise SpecError(field, f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise SpecError(field, too_big)  # it grew while being read
    return data


def load_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file into a dict; every failure is a :class:`SpecError` naming the file."""
    where = str(path)
    data = read_input_file(path, where, "an experiment file (.toml)")
    if data.startswith(b"\xef\xbb\xbf"):
        raise SpecError(where, "starts with a UTF-8 byte-order mark (BOM), which TOML does not allow; save it as UTF-8 without BOM")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(where, f"not UTF-8 text (byte {e.start}); expected a TOML experiment file") from None
    check_nesting(text, where)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(where, f"malformed TOML: {e}") from None
    except RecursionError:  # not reached after check_nesting; never a traceback
        raise SpecError(where, f"nested too deeply; at most {MAX_DEPTH} levels") from None
    check_tree(raw)
    rebase_traces(raw, Path(path).parent)
    return raw


def rebase_traces(raw: dict[str, Any], base: Path) -> None:
    """A link's relative ``trace`` path (``[[links]]``) is relative to the experiment file: made
    absolute here, so that overrides, sweeps and stored specs read the same file."""
    links = raw.get("links")
    if not isinstance(links, list):
        return
    for link in links:
        if isinstance(link, dict) and isinstance(link.get("trace"), str) and link["trace"] and not Path(link["trace"]).is_absolute():
            link["trace"] = str((base / link["trace"]).resolve())


def parse_override(item: str) -> tuple[list[str], Any]:
    """Split ``"a.b.0.c=VALUE"`` into (path parts, value).

    The value is read as a TOML value when it parses (``8`` -> int, ``true``
    -> bool, ``"x"`` -> str, ``{start="1s"}`` -> table), else kept as a
    string (``8bdp``, ``5s``, ``reno``).
    """
    path, sep, text = item.partition("=")
    path = path.strip()
    if not sep or not path:
        raise SpecError("--set", f"expected PATH=VALUE (e.g. bottleneck.buffer=8bdp), got {item!r}")
    parts = path.split(".")
    if any(not p.strip() for p in parts):
        raise SpecError("--set", f"empty component in path {path!r}")
    if len(parts) > MAX_DEPTH:
        raise SpecError("--set", f"a path of {len(parts)} components; at most {MAX_DEPTH}")
    text = text.strip()
    check_nesting(text, "--set")
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text
    check_tree(value)
    return [p.strip() for p in parts], value


#: Keys whose value may be a bare name standing for a table: ``cca = "cubic"`` is
#: ``cca = { name = "cubic" }``, ``qdisc = "codel"`` is ``qdisc = { kind = "codel" }``.
SHORTHAND_KEYS = {"cca": "name", "qdisc": "kind"}


def expand_shorthand(node: dict[str, Any], key: str) -> None:
    """Turn ``node[key]`` from a bare name into its table, so a sub-key can be set (``flows.0.cca.beta``)."""
    if key in SHORTHAND_KEYS and isinstance(node.get(key), str):
        node[key] = {SHORTHAND_KEYS[key]: node[key]}


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``PATH=VALUE`` overrides to a copy of ``raw`` (before validation).

    Path components are table keys or list indices (``flows.1.cca``); missing
    tables are created, list indices must exist. Unknown keys are caught later
    by validation, which names them.
    """
    out = copy.deepcopy(raw)
    for item in overrides:
        parts, value = parse_override(item)
        node: Any = out
        for depth, part in enumerate(parts):
            here = ".".join(parts[: depth + 1])
            parent = ".".join(parts[:depth]) or "the experiment"
            last = depth == len(parts) - 1
            if isinstance(node, list):
                if not part.isdigit():
                    raise SpecError(here, f"{parent} is a list; use an index 0..{len(node) - 1}")
                idx = int(part)
                if idx >= len(node):
                    raise SpecError(here, f"{parent} has {len(node)} entries (indices 0..{len(node) - 1})")
                if last:
                    node[idx] = value
                else:
                    node = node[idx]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    if part not in node:
                        node[part] = {}
                    expand_shorthand(node, part)
                    node = node[part]
            else:
                raise SpecError(here, f"{parent} is a value ({node!r}), not a table or list")
    return out
