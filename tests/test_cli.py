"""The command line: bad input exits 2 with one line naming the field; no tracebacks.

In-process tests call ``ccfair.cli.main(argv)``; a few run ``python -m ccfair``
in a subprocess to check the real exit status and stderr. Runs use the fake
simulator (fake_core.py) so they work before the Rust extension is built.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ccfair.cli import main

ROOT = Path(__file__).resolve().parent.parent
S0 = ROOT / "examples" / "s0-cubic-vs-bbr.toml"


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, err: str, field: str) -> None:
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {field}: "), lines[0]
    assert "Traceback" not in err


@pytest.fixture
def bad_files(tmp_path: Path) -> dict[str, Path]:
    base = S0.read_text()
    files = {
        "unknown_cca": base.replace('cca = "bbr"', 'cca = "nosuchcca"'),
        "negative_rate": base.replace('rate = "10Mbit"', 'rate = "-10Mbit"'),
        "missing_field": base.replace('rtt = "50ms"           # base RTT', "# base RTT"),
        "unknown_key": base.replace('delay = "0ms"', 'delay = "0ms"\ncolour = "red"'),
        "zero_buffer": base.replace('buffer = "0.5bdp"', 'buffer = "0pkt"'),
        "malformed": base.replace("[bottleneck]", "[bottleneck"),
        "window": base.replace('end = "45s"', 'end = "50s"'),
    }
    out = {}
    for name, text in files.items():
        assert text != base, name
        p = tmp_path / f"{name}.toml"
        p.write_text(text)
        out[name] = p
    return out


@pytest.mark.parametrize(
    ("case", "field", "allowed"),
    [
        ("unknown_cca", "flows.1.cca", "reno, cubic, bbr"),
        ("negative_rate", "bottleneck.rate", "> 0"),
        ("missing_field", "flows.0.rtt", "missing"),
        ("unknown_key", "bottleneck.colour", "valid keys: rate, delay, buffer"),
        ("zero_buffer", "bottleneck.buffer", "> 0"),
        ("window", "window.end", "duration"),
    ],
)
def test_bad_input_one_line_exit_2(capsys, bad_files, case, field, allowed):
    code, out, err = run_main(capsys, "run", str(bad_files[case]))
    assert_one_line_error(code, err, field)
    assert allowed in err
    assert out == ""


def test_malformed_toml(capsys, bad_files):
    path = bad_files["malformed"]
    code, _, err = run_main(capsys, "run", str(path))
    assert_one_line_error(code, err, str(path))
    assert "line" in err


def test_file_not_found(capsys, tmp_path):
    path = tmp_path / "missing.toml"
    code, _, err = run_main(capsys, "run", str(path))
    assert_one_line_error(code, err, str(path))
    assert "not found" in err


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--set", "nonsense"], "--set"),
        (["--set", "flows.7.cca=reno"], "flows.7"),
        (["--set", "flows.1.cca=nosuchcca"], "flows.1.cca"),
        (["--set", "bottleneck.buffer=0bdp"], "bottleneck.buffer"),
        (["--set", "bottleneck.buffr=2bdp"], "bottleneck.buffr"),
        (["--seed", "-3"], "seed"),
        (["--seed", "abc"], "--seed"),
    ],
)
def test_bad_options(capsys, args, field):
    code, _, err = run_main(capsys, "run", str(S0), *args)
    assert_one_line_error(code, err, field)


def test_usage_errors_are_one_line(capsys):
    for argv in (["run"], ["run", str(S0), "--bogus"], ["frobnicate"]):
        code, _, err = run_main(capsys, *argv)
        assert code == 2
        assert len(err.strip().splitlines()) == 1 and err.startswith("error: "), err


def test_check_prints_the_resolved_config(capsys):
    code, out, _ = run_main(capsys, "check", str(S0), "--set", "bottleneck.buffer=8bdp")
    assert code == 0
    assert json.loads(out)["bottleneck"]["qdisc"]["limit_packets"] == 333


def test_run_json(capsys, fake_sim):
    code, out, _ = run_main(capsys, "run", str(S0), "--json", "--seed", "5")
    assert code == 0
    summary = json.loads(out)
    assert summary["seed"] == 5
    assert summary["fness"] == pytest.approx(0.5)
    assert [f["name"] for f in summary["flows"]] == ["A", "B"]


def test_run_table_and_out(capsys, fake_sim, tmp_path):
    code, out, _ = run_main(capsys, "run", str(S0), "--out", str(tmp_path / "res"), "--set", "flows.0.cca=cubic+pacing")
    assert code == 0
    for text in ("cubic+pacing", "bbr", "JFI", "0.900", "fness", "+0.500", "utilization", "p99", "sim wall time"):
        assert text in out, text
    assert (tmp_path / "res" / "flows.parquet").exists()


def test_list_ccas_shows_aliases_and_every_parameter_with_its_default(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    code, out, _ = run_main(capsys, "list", "ccas")
    assert code == 0
    for text in ("reno", "cubic", "bbr", "newreno", "bbrv1", "+pacing", "prague-rttdep", "ledbat-25ms"):
        assert text in out, text
    # defaults in the parameter's unit, as declared in cc/*.rs (Linux's values)
    for text in ("beta = 0.7", "hystart = true", "hystart_ack_delta = 2ms", "target = 100ms", "shift_g = 4", "cwnd_gain = 2"):
        assert text in out, text


def test_listings_fit_100_columns_and_show_units_and_variants(capsys):
    for what in ("ccas", "qdiscs", "profiles"):
        code, out, _ = run_main(capsys, "list", what)
        assert code == 0
        assert max(len(line) for line in out.splitlines()) <= 100, what
    code, out, _ = run_main(capsys, "list", "ccas")
    # a variant lists the values it runs with (cc/ledbat.rs: ledbat25's target is 25 ms), marked as its own
    row = out[out.index("ledbat25") :]
    assert "target = 25ms [time] *" in row[: row.index("├")]
    code, out, _ = run_main(capsys, "list", "profiles")
    assert "False" not in out and "pacing = false" in out  # TOML's notation, not Python's


def test_list_qdiscs_json_has_every_parameter_once_with_a_unit(capsys):
    from ccfair import qdiscs

    code, out, _ = run_main(capsys, "list", "qdiscs", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["name"] for r in rows] == qdiscs.kinds()
    for r in rows:
        names = [p["name"] for p in r["params"]]
        assert len(names) == len(set(names)), (r["name"], names)  # limit / threshold once, not per field
        assert all(p["unit"] for p in r["params"]), r["name"]
    red = {p["name"]: p for p in next(r for r in rows if r["name"] == "red")["params"]}
    assert red["limit"]["default"] == "bottleneck.buffer" and red["max_p"]["default"] == "0.02"


def test_run_labels_overrides_and_flow_names(capsys):
    code, out, _ = run_main(
        capsys, "run", str(ROOT / "examples" / "s0-content-provider.toml"),
        "--set", "duration=8s", "--set", "window={start=\"6s\",end=\"8s\"}", "--set", 'flows.0.cca={name="cubic",beta=0.5}', "--set", "flows.0.pacing=true",
    )  # fmt: skip
    assert code == 0
    assert "(--set duration=8s window=" in out  # the title says what changed
    assert "cubic[beta=0.5]+pacing" in out  # variant parameters and pacing in the flow's CCA
    assert "fness (lab vs cp)" in out  # named by the flows' names, not "A vs B"


def test_terminal_output_escapes_control_characters_and_markup(capsys, tmp_path):
    f = tmp_path / "evil.toml"
    f.write_text(
        'duration = "3s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\nname = "\\u001b[2J\\u001b[31mx"\ncca = "cubic"\nrtt = "50ms"\n'
        '[[flows]]\nname = "[/bold]y"\ncca = "bbr"\nrtt = "50ms"\n'
    )
    code, out, err = run_main(capsys, "run", str(f))
    assert code == 0, err
    assert "\x1b" not in out and "\\x1b[2J\\x1b[31mx" in out
    assert "[/bold]y" in out  # shown as written, not taken as rich markup


def test_version_names_the_package_and_commit(capsys):
    import ccfair
    from ccfair import provenance

    code, out, _ = run_main(capsys, "--version")
    assert code == 0
    assert out.strip() == f"ccfair {ccfair.__version__} (git {provenance.git_commit() or 'commit unknown'})"


@pytest.mark.parametrize(
    ("argv", "code", "field"),
    [
        (["run", "NOFILE.toml"], 2, "NOFILE.toml"),
        (["run", str(S0), "--set", "flows.1.cca=nosuchcca"], 2, "flows.1.cca"),
        (["run", str(S0), "--set", "bottleneck.rate=-1Mbit"], 2, "bottleneck.rate"),
    ],
)
def test_subprocess_exit_status_and_no_traceback(subprocess_env, argv, code, field):
    p = subprocess.run([sys.executable, "-m", "ccfair", *argv], capture_output=True, text=True, env=subprocess_env, timeout=60)
    assert p.returncode == code
    assert "Traceback" not in p.stderr + p.stdout
    assert p.stderr.strip().splitlines() == [p.stderr.strip()]
    assert p.stderr.startswith(f"error: {field}: ")


def test_subprocess_help(subprocess_env):
    p = subprocess.run([sys.executable, "-m", "ccfair", "run", "--help"], capture_output=True, text=True, env=subprocess_env, timeout=60)
    assert p.returncode == 0
    for option in ("--seed", "--set", "--out", "--json"):
        assert option in p.stdout


def test_wall_line_names_the_backend():
    # A testbed run has no simulated packet rate: its wall time is real time.
    from ccfair.cli import _wall_line

    assert _wall_line({"sim_wall_s": 0.0097, "data_packets": 37885}) == ("sim wall time", "9.7 ms (3.91 M data packets/s)")
    assert _wall_line({"backend": "testbed", "sim_wall_s": 17.0062, "data_packets": 0}) == ("testbed wall time", "17.0 s")
