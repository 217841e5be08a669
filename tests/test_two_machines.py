"""One workspace on two machines: two clones of a bare remote, concurrent retains and
reflections on both, pulled both ways (merge and rebase) through gitmem's merge driver."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from gitrepo import GitRepo
from indexoracle import index_rows, recalled, tree_chunks
from test_reflect_run import FakeModel

from gitmem import githooks, merge_setup
from gitmem.index.db import get_meta, open_index
from gitmem.index.indexer import update
from gitmem.reflect import review
from gitmem.reflect.run import RunOptions, reflect
from gitmem.reflect.state import read_state
from gitmem.retain import retain
from gitmem.scaffold import init_workspace
from gitmem.workspace import Workspace

DAY = "2025-11-27"


def _git(path: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stdout}{proc.stderr}")
    return proc


@pytest.fixture
def machines(tmp_path: Path) -> tuple[Workspace, Workspace, Path]:
    laptop = tmp_path / "laptop"
    init_workspace(laptop)  # installs the hooks and the merge driver
    GitRepo(laptop).commit("start", "2025-11-01", {
        "memory/2025-11-20.md": "# 2025-11-20\n\n## Retain\n- O(c=0.6) @Peter: Prefers short replies.\n"
                                "- W @Peter: Lives in Berlin.\n"})
    remote = tmp_path / "remote.git"
    _git(tmp_path, "clone", "-q", "--bare", str(laptop), str(remote))
    _git(laptop, "remote", "add", "origin", str(remote))
    _git(laptop, "fetch", "-q", "origin")
    _git(laptop, "branch", "-q", "--set-upstream-to=origin/main", "main")
    desktop = tmp_path / "desktop"
    _git(tmp_path, "clone", "-q", str(remote), str(desktop))
    a, b = Workspace(laptop), Workspace(desktop)
    githooks.install(b)  # .gitattributes came with the clone; the driver config is per clone
    assert merge_setup.status(a).configured and merge_setup.status(b).configured
    assert merge_setup.status(b).attributes
    update(a)
    update(b)
    return a, b, remote


def _reflect_and_merge(ws: Workspace) -> None:
    res = reflect(ws, RunOptions(model=lambda: FakeModel(verdict={"relation": "supports", "strength": "strong"})))
    assert res["status"] == "written", res
    review.merge(ws)


def _memory_files(ws: Workspace) -> dict[str, str]:
    out = {}
    for p in sorted(ws.root.rglob("*")):
        rel = p.relative_to(ws.root).as_posix()
        if p.is_file() and not rel.startswith((".git/", ".memory/")) and (rel.endswith(".md") or rel.endswith(".json")):
            out[rel] = p.read_text(encoding="utf-8")
    return out


def _assert_whole(ws: Workspace, facts: list[str]) -> None:
    files = _memory_files(ws)
    for rel, text in files.items():
        assert not re.search(r"^(<<<<<<<|=======|>>>>>>>)", text, re.M), f"conflict markers in {rel}"
    logs = "".join(t for rel, t in files.items() if rel.startswith("memory/"))
    counts = Counter(line for line in logs.splitlines() if line.startswith("- "))
    for fact in facts:
        assert counts[fact] == 1, (fact, counts[fact])
    assert not _git(ws.root, "status", "--porcelain").stdout.strip()


def _assert_index_current(ws: Workspace) -> None:
    head = _git(ws.root, "rev-parse", "HEAD").stdout.strip()
    conn, _ = open_index(ws)
    try:
        tip = get_meta(conn, "tip")
    finally:
        conn.close()
    assert tip == head  # the hooks followed the pull
    incremental = index_rows(ws)
    assert recalled(ws, None) == tree_chunks(ws.root, head)
    copy = ws.root.parent / f"{ws.root.name}-rebuilt"
    shutil.copytree(ws.root, copy, symlinks=True, ignore=shutil.ignore_patterns(".memory"))
    fresh = Workspace(copy)
    update(fresh, rebuild=True)
    assert index_rows(fresh) == incremental
    shutil.rmtree(copy)


def test_two_machines_merge_and_rebase(machines: tuple[Workspace, Workspace, Path]) -> None:
    a, b, _ = machines
    ours = ["- W @Peter: Moved to Lisbon.", "- B: I booked the table for Friday.", "- W @Anna: Speaks Portuguese."]
    theirs = ["- W @Anna: Speaks Portuguese.", "- S: The desktop fan is loud.", "- W @Peter: Asked for shorter replies."]
    for line in ours:
        retain(a, line[2:], DAY)
    retain(a, "W @Peter: Flies home on Sunday.", "2025-11-28")
    for line in theirs:
        retain(b, line[2:], DAY)
    retain(b, "B: I renewed the domain.", "2025-11-29")
    _reflect_and_merge(a)
    _reflect_and_merge(b)

    # Round 1: the laptop pushes, the desktop pulls with a merge.
    _git(a.root, "push", "-q", "origin", "main")
    pulled = _git(b.root, "pull", "--no-rebase", "--no-edit", "origin", "main", check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    facts = sorted(set(ours + theirs)) + ["- W @Peter: Flies home on Sunday.", "- B: I renewed the domain."]
    _assert_whole(b, facts)
    day = (b.root / f"memory/{DAY}.md").read_text()
    new = [ln for ln in day.splitlines() if ln.startswith("- ")]
    assert new == sorted(set(ours + theirs))  # one day, same time: by text
    state = read_state(b.root, "HEAD")
    assert state.through is not None
    assert _git(b.root, "merge-base", "--is-ancestor", state.through, "HEAD").returncode == 0
    peter = (b.root / "bank/entities/Peter.md").read_text()
    assert "Moved to Lisbon." in peter and "Asked for shorter replies." in peter
    _assert_index_current(b)
    # The next reflection owns the merged blocks again (their stamp is intact) and regenerates them.
    res = reflect(b, RunOptions(model=None))
    assert not [s for s in res.get("skipped", []) if "by hand" in s["reason"]], res["skipped"]

    # Round 2: both go on; the laptop pulls with a rebase.
    ours2 = ["- W @Peter: Prefers tea to coffee.", "- B: I renewed the car insurance."]
    theirs2 = ["- W @Anna: Arrives on Tuesday.", "- B: I renewed the car insurance."]
    for line in ours2:
        retain(a, line[2:], "2025-11-30")
    for line in theirs2:
        retain(b, line[2:], "2025-11-30")
    _reflect_and_merge(b)
    _reflect_and_merge(a)
    _git(b.root, "push", "-q", "origin", "main")
    rebased = _git(a.root, "pull", "--rebase", "origin", "main", check=False)
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    all_facts = facts + sorted(set(ours2 + theirs2))
    _assert_whole(a, all_facts)
    _assert_index_current(a)
    _git(a.root, "push", "-q", "origin", "main")
    assert _git(b.root, "pull", "-q", "--no-rebase", "origin", "main", check=False).returncode == 0
    _assert_whole(b, all_facts)
    _assert_index_current(b)
    assert (a.root / "memory/2025-11-30.md").read_text() == (b.root / "memory/2025-11-30.md").read_text()


def test_a_clone_without_the_driver_still_merges_as_text(machines: tuple[Workspace, Workspace, Path]) -> None:
    a, b, _ = machines
    githooks.uninstall(b)
    assert not merge_setup.status(b).configured and not (b.root / ".gitattributes").exists()
    _git(b.root, "checkout", "-q", "--", ".gitattributes")  # the committed file stays; only its config is gone
    retain(a, "W @Peter: Moved to Lisbon.", DAY)
    retain(b, "S: The desktop fan is loud.", DAY)
    _git(a.root, "push", "-q", "origin", "main")
    pulled = _git(b.root, "pull", "--no-rebase", "--no-edit", "origin", "main", check=False)
    # git's own text merge: a conflict, with both bullets inside the markers, and no driver error.
    assert pulled.returncode != 0 and "CONFLICT (add/add)" in pulled.stdout
    text = (b.root / f"memory/{DAY}.md").read_text()
    assert "<<<<<<<" in text and "Moved to Lisbon." in text and "desktop fan" in text


def test_install_and_uninstall_are_idempotent(tmp_path: Path) -> None:
    ws_path = tmp_path / "ws"
    init_workspace(ws_path, install_hooks=False)
    (ws_path / ".gitattributes").write_text("*.png binary\n")
    ws = Workspace(ws_path)
    first = githooks.install(ws)
    assert any(".gitattributes" in c for c in first.changed)
    assert githooks.install(ws).changed == []
    text = (ws_path / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n") and "memory/*.md merge=gitmem" in text
    attr = _git(ws_path, "check-attr", "merge", "--", f"memory/{DAY}.md", "bank/entities/Peter.md", "memory.md",
                "bank/.reflect.json", "bank/world.md", "notes/memory.md").stdout
    assert attr.count(": merge: gitmem") == 5 and "notes/memory.md: merge: unspecified" in attr
    assert first.as_dict()["merge_driver"]["configured"] is True
    githooks.uninstall(ws)
    assert (ws_path / ".gitattributes").read_text() == "*.png binary\n"
    assert not merge_setup.status(ws).configured
