"""Recall answers from the working tree as it is now: every uncommitted edit to a memory file shows,
however little it changes on disk (same size, same modification time: index/worktree.py), and so
does a new file git does not track yet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace
from gitrepo import GitRepo

LOG = "memory/2025-11-02.md"
BEFORE = "# Log\n\n- W @Peter: Lives in Lisbon near the river.\n"


@pytest.fixture()
def ws(tmp_path: Path) -> GitRepo:
    r = GitRepo.init(tmp_path / "ws")
    r.commit("one", files={"memory.md": "# Memory\n\n- W @Ann: Plays chess.\n", LOG: BEFORE})
    return r


def recall_cli(r: GitRepo, query: str) -> str:
    return subprocess.run([sys.executable, "-m", "gitmem", "-C", str(r.path), "recall", query],
                          capture_output=True, text=True, check=True).stdout


def contents(r: GitRepo, query: str) -> list[str]:
    with Session(Workspace(r.path)) as s:
        return [res.content for res in s.search(query, Options(k=10)).results]


def test_an_edit_of_the_same_size_shows(ws: GitRepo) -> None:
    assert "Lisbon" in recall_cli(ws, "Peter lives")  # the index and its overlay tables exist now
    after = BEFORE.replace("Lisbon", "Ostend")
    assert len(after) == len(BEFORE)
    ws.write(LOG, after)
    out = recall_cli(ws, "Peter lives")
    assert "Ostend" in out and "Lisbon" not in out


def test_a_second_edit_with_the_same_size_and_time_shows(ws: GitRepo) -> None:
    # Two edits within one tick of the file system's clock (or an editor that keeps the time):
    # size and modification time say nothing changed, the text did.
    path = ws.write(LOG, BEFORE.replace("Lisbon", "Ostend"))
    st = path.stat()
    assert any("Ostend" in c for c in contents(ws, "Peter lives"))
    path.write_text(BEFORE.replace("Lisbon", "Tarifa"), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    got = contents(ws, "Peter lives")
    assert any("Tarifa" in c for c in got) and not any("Ostend" in c or "Lisbon" in c for c in got)


def test_a_new_untracked_file_shows(ws: GitRepo) -> None:
    assert "Marrakech" not in recall_cli(ws, "Marrakech")
    ws.write("memory/2025-11-03.md", "- B @Peter: Flew to Marrakech for the weekend.\n")
    ws.write("bank/entities/Omar.md", "# Omar\n\n- Runs a riad in Marrakech.\n")
    out = recall_cli(ws, "Marrakech")
    assert "Flew to Marrakech" in out and "Runs a riad" in out
