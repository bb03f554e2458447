"""`ccfair plot DIR`: one run's figures from its result directory."""

from __future__ import annotations

import subprocess
import sys


def _ccfair(*args, cwd):
    return subprocess.run([sys.executable, "-m", "ccfair", *args], capture_output=True, text=True, cwd=cwd)


def test_plot_writes_png_and_svg_for_each_figure(tmp_path):
    f = tmp_path / "e.toml"
    f.write_text(
        'duration = "5s"\n[bottleneck]\nrate = "10Mbit"\n'
        '[[flows]]\nname = "bulk"\ncca = "cubic"\nrtt = "50ms"\n'
        '[[groups]]\nname = "web"\ncca = "bbr"\nrtt = "20ms"\narrival_rate = 5\nsize = "50KB"\nstop = "4s"\n'
    )
    assert _ccfair("run", str(f), "--out", str(tmp_path / "r"), cwd=tmp_path).returncode == 0
    p = _ccfair("plot", str(tmp_path / "r"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    for name in ("throughput", "queue-delay", "sojourn-hist", "fct-cdf"):  # fct-cdf: the group's finite flows
        for ext in ("png", "svg"):
            out = tmp_path / "r" / "figures" / f"{name}.{ext}"
            assert out.stat().st_size > 1000, out


def test_plot_of_a_non_result_directory_is_a_one_line_error(tmp_path):
    p = _ccfair("plot", str(tmp_path), cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith("error: ") and "not a run result directory" in p.stderr
    assert "Traceback" not in p.stderr
