"""Runs starting at the same time as a clean-up: a run's registration (state file, run
directory) and a clean-up's reading of liveness and removal of files are serialised by the
registry lock (ccfair.testbed.netns, module docstring), flock(2) semantics: a second open
file description blocks on LOCK_EX until the first is closed.

Everything here runs in a private state directory with the host's namespaces, links and
nftables tables hidden from the clean-up, so no real run can be touched; no root needed."""

from __future__ import annotations

import json
import os
import threading

import pytest
from ccfair.testbed import netns


@pytest.fixture()
def private_state(tmp_path, monkeypatch):
    monkeypatch.setattr(netns, "STATE_DIR", tmp_path)
    monkeypatch.setattr(netns, "FORWARD_MARK", tmp_path / "host-ip_forward.orig")
    monkeypatch.setattr(netns, "list_namespaces", lambda: [])
    monkeypatch.setattr(netns, "list_links", lambda: [])
    monkeypatch.setattr(netns, "host_tables", lambda: [])
    return tmp_path


def test_a_clean_up_during_a_runs_registration_leaves_the_run_its_state_and_directory(private_state, monkeypatch):
    """The state file is written as a temporary file then renamed; a clean-up reading the
    directory between the two saw a run id without a state file (a dead run) and removed what
    the run wrote next. Under the lock the clean-up waits until the run is registered."""
    topo = netns.Topology(1)
    written, go = threading.Event(), threading.Event()

    def paused_save(self: netns.Topology) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"id": self.id, "owner": netns.proc_id(os.getpid()), "processes": []}))
        written.set()
        go.wait(30)
        os.replace(tmp, self.state_file)

    monkeypatch.setattr(netns.Topology, "save_state", paused_save)
    errors: list[BaseException] = []

    def register() -> None:
        try:
            topo.register()
        except BaseException as e:  # reported below
            errors.append(e)

    removed: list[str] = []
    runner = threading.Thread(target=register)
    runner.start()
    assert written.wait(30)
    cleaner = threading.Thread(target=lambda: removed.extend(netns.clean_stale()))
    cleaner.start()
    cleaner.join(1.0)  # a clean-up not held back finishes here, in the middle of the registration
    go.set()
    runner.join(30)
    cleaner.join(30)
    assert not errors
    assert not any(topo.id in r for r in removed)
    assert topo.state_file.exists() and topo.dir.is_dir()


def test_a_run_whose_id_another_run_registered_stops_without_touching_that_run(private_state):
    topo = netns.Topology(1)
    other = {"id": topo.id, "owner": netns.proc_id(os.getpid()), "processes": []}
    topo.state_file.write_text(json.dumps(other))
    with pytest.raises(netns.NetnsError, match="taken"):
        topo.register()
    topo.destroy()
    assert json.loads(topo.state_file.read_text()) == other


def test_a_clean_up_still_removes_a_dead_runs_files_under_the_lock(private_state):
    dead = "0dea"
    (private_state / f"{dead}.json").write_text(json.dumps({"id": dead, "owner": [2**22 + 1, 1], "processes": []}))
    (private_state / dead).mkdir()
    (private_state / dead / "x.stderr").write_text("")
    removed = netns.clean_stale()
    assert any(dead in r for r in removed)
    assert not any(p.exists() for p in netns._run_files(dead))
