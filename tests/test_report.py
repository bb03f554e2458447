"""``ccfair report``: one self-contained HTML page that renders offline with every figure.

The browser test loads the page in headless Chromium (Debian's ``chromium``
package, installed by scripts/test.sh when missing) and checks that every
image decoded (``naturalWidth > 0``); it is skipped, saying why, only when
no Chromium can be found.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ccfair import (
    _core,  # noqa: F401  a missing extension must fail the suite, not skip it
    ccas,
)
from ccfair.cli import main
from ccfair.report import build_report
from ccfair.sweep import plan_sweep, run_sweep
from experiments import cubic_then_bbr

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: Appended to a copy of the report: records how many images decoded once the page has loaded.
PROBE = """<script>
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0 && i.naturalHeight > 0; });
  document.body.setAttribute('data-decoded', ok.length + '/' + imgs.length);
});
</script>"""


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    ccas.clear_cache()
    sweep = {"repetitions": 2, "flip_order": True, "pairs": [["cubic", "bbr"], ["reno", "reno"]], "bottleneck.buffer": ["0.5bdp", "2bdp"]}
    data = cubic_then_bbr("report-test", "4s", ("2s", "4s"), 5, jitter="20ms", sweep=sweep)
    out = tmp_path_factory.mktemp("report") / "sweep"
    run_sweep(plan_sweep(data), out, executor="inprocess", source="# report test\n")
    return out


@pytest.fixture(scope="module")
def report_html(sweep_dir) -> Path:
    assert main(["report", str(sweep_dir)]) == 0
    return sweep_dir / "report.html"


def test_report_is_self_contained(sweep_dir, report_html):
    html = report_html.read_text()
    imgs = re.findall(r"<img [^>]*src=\"([^\"]*)\"", html)
    # fness per buffer setting (2), max-min share per buffer setting (2), JFI heatmap, JFI box plot,
    # Ware et al.'s model over the BBR-vs-CUBIC buffer axis, throughput and queue of one run
    assert len(imgs) == 9
    assert all(src.startswith("data:image/png;base64,") for src in imgs)
    # nothing is fetched: no external script, style sheet, image or font
    assert not re.search(r"(src|href)\s*=\s*\"(?!data:|#)", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    # experiment, seeds and versions are on the page
    assert "# report test" in html
    runs = __import__("ccfair").load_sweep(sweep_dir)
    for seed in runs["seed"]:
        assert str(seed) in html
    for name in ("ccfair", "numpy", "pandas", "pyarrow", "python"):
        assert f'<th class="l">{name}</th>' in html
    assert "16 of 16 runs stored" in html


def test_report_of_incomplete_sweep_says_so(sweep_dir, tmp_path):
    partial = tmp_path / "partial"
    shutil.copytree(sweep_dir, partial)
    from ccfair import store

    victim = sorted((partial / "batches").iterdir())[0]  # one committed batch of runs
    shutil.rmtree(victim)
    left = len(store.finished_runs(partial))
    assert 0 < left < 16
    html = build_report(partial)
    assert f"{left} of 16 runs stored (incomplete" in html


def test_report_of_non_sweep_dir_exits_2(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "not a sweep directory" in capsys.readouterr().err


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_report_renders_in_headless_chromium(report_html, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium found: scripts/test.sh installs Debian's 'chromium' with apt-get (needs root and apt)")
    html = report_html.read_text()
    n_imgs = len(re.findall(r"<img ", html))
    assert n_imgs >= 4
    probe = tmp_path / "probe.html"
    probe.write_text(html.replace("</body>", PROBE + "</body>"))
    cmd = [
        browser,
        *CHROMIUM_FLAGS,
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=10000",
        "--dump-dom",
        probe.as_uri(),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    m = re.search(r'data-decoded="(\d+)/(\d+)"', res.stdout)
    assert m, "the page did not finish loading in Chromium: " + res.stderr[-2000:]
    assert (int(m.group(1)), int(m.group(2))) == (n_imgs, n_imgs)
