"""A one-link topology is the dumbbell: every bench/identity config rewritten with its bottleneck
as the one link of ``links`` (every flow's ``path`` = that link) must give the dumbbell's result,
field for field (wall time aside), through the simulator's topology path (topology.rs).

    python bench/topology/one_link.py target/release/ccfair-bench

Prints one line per config (``same`` or the differing fields) and the count; exits 1 on a difference.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

IDENTITY = Path(__file__).resolve().parent.parent / "identity"


def result(binary: str, config: dict[str, Any]) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(config, f)
        f.flush()
        out = json.loads(subprocess.run([binary, "json", f.name], capture_output=True, text=True, check=True).stdout)
    out.pop("wall_ns")
    return out


def as_one_link(config: dict[str, Any]) -> dict[str, Any]:
    c = json.loads(json.dumps(config))
    c["links"] = [{"name": "bottleneck", **c.pop("bottleneck")}]
    for f in c["flows"]:
        f["path"] = ["bottleneck"]
    return c


def main(binary: str) -> int:
    files = sorted(IDENTITY.glob("*.json"))
    same = 0
    for path in files:
        config = json.loads(path.read_text())
        a, b = result(binary, config), result(binary, as_one_link(config))
        diff = [k for k in a if a[k] != b.get(k)]
        same += not diff
        print(f"{'same' if not diff else 'DIFF'}  {path.name}" + (f"  {', '.join(diff)}" if diff else ""))
    print(f"{same} of {len(files)} identical")
    return 0 if same == len(files) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
