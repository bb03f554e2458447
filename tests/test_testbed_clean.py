"""`ccfair testbed clean`: removes a dead run's namespaces, links, processes and files,
and leaves a live run's alone. Needs root and network namespaces; uses the
real state directory (a private one would make other users' live runs look dead)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ccfair.cli import main
from ccfair.testbed import netns
from test_testbed import needs_netns


def _fresh_id() -> str:
    while True:
        rid = os.urandom(2).hex()
        if not any(p.exists() for p in netns._run_files(rid)) and all(netns.run_id_of(n) != rid for n in netns.list_namespaces()):
            return rid


def _fake_run(rid: str, owner: list[int], processes: list[list[int]]) -> None:
    netns.STATE_DIR.mkdir(parents=True, exist_ok=True)
    (netns.STATE_DIR / f"{rid}.json").write_text(
        json.dumps({"id": rid, "owner": owner, "namespaces": [f"ccf-{rid}-b"], "processes": processes})
    )
    (netns.STATE_DIR / rid).mkdir()
    (netns.STATE_DIR / rid / "x.stderr").write_text("")
    netns.ip("netns", "add", f"ccf-{rid}-b")
    netns.ip("link", "add", f"ccf-{rid}-s0", "type", "veth", "peer", "name", f"ccf-{rid}-b0")


@needs_netns
def test_clean_removes_a_dead_runs_leftovers_and_keeps_a_live_run(capsys):
    dead, live = _fresh_id(), _fresh_id()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    orphan = subprocess.Popen(["sleep", "60"])  # a helper process the dead run recorded
    _fake_run(dead, [gone.pid, 1], [netns.proc_id(orphan.pid)])
    _fake_run(live, netns.proc_id(os.getpid()), [])
    try:
        assert main(["testbed", "clean"]) == 0
        out = capsys.readouterr().out
        assert f"namespace ccf-{dead}-b" in out and f"process {orphan.pid}" in out
        assert "left" in out and f"{live} (PID {os.getpid()})" in out
        assert orphan.wait(timeout=10) == -9
        names = netns.list_namespaces()
        links = netns.list_links()
        assert f"ccf-{dead}-b" not in names and not any(netns.run_id_of(x) == dead for x in links)
        assert not any(p.exists() for p in netns._run_files(dead))
        assert f"ccf-{live}-b" in names and f"ccf-{live}-s0" in links  # the live run untouched
        assert (netns.STATE_DIR / f"{live}.json").exists()
    finally:
        netns.ip("netns", "del", f"ccf-{live}-b", check=False)
        netns.ip("link", "del", f"ccf-{live}-s0", check=False)
        netns._remove_run_files(live)
        if orphan.poll() is None:
            orphan.kill()
