"""One testbed run in a child Python process, for the bench scripts (shared by
bench/realism_calibration.py and bench/testbed_acceptance.py).

The spec is written to a JSON file under `tmp`; the child runs it with
`ccfair.run(..., backend='testbed')` and prints the summary as JSON. A failing
run raises RuntimeError with the child's last stderr line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def testbed_summary(raw: dict[str, Any], seed: int, tmp: Path) -> dict[str, Any]:
    """Run spec `raw` with `seed` on the testbed in a subprocess; return its summary."""
    f = tmp / f"{abs(hash(json.dumps(raw, sort_keys=True)))}-{seed}.json"
    f.write_text(json.dumps(raw))
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys,json,ccfair; from ccfair import Spec;"
            "r=ccfair.run(Spec.from_dict(json.load(open(sys.argv[1]))), seed=int(sys.argv[2]), backend='testbed');"
            "print(json.dumps(r.summary))",
            str(f),
            str(seed),
        ],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1])
    return json.loads(p.stdout)
