"""Issue 12, data loss and stuck state: each test reproduces one reported case (real git, real
files, real processes) and fails on the behaviour the issue describes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gitmem.retain as retain_mod
from gitmem.errors import GitmemError
from gitmem.retain import retain
from gitmem.workspace import Workspace
from gitrepo import GitRepo

LOG = "memory/2025-11-27.md"


def gitmem(cwd: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitmem", "-C", str(cwd), *args], capture_output=True, text=True,
                          **kw)  # type: ignore[call-overload]


@pytest.fixture
def ws(repo: GitRepo) -> tuple[GitRepo, Workspace]:
    repo.commit("start", files={"memory.md": "# Memory\n", ".gitignore": ".memory/\n",
                                LOG: "# 2025-11-27\n\n## Retain\n- W @Andy: Turns 40.\n"})
    return repo, Workspace(repo.path)


# --- (3) retain writes the day log atomically --------------------------------------------------------

def test_retain_on_a_full_disk_leaves_the_log_byte_for_byte(ws: tuple[GitRepo, Workspace]) -> None:
    repo, _ = ws
    # 60 KB of uncommitted lines, then a file-size limit of 40 KB: writing the new log cannot finish.
    body = "# 2025-11-27\n\n" + "".join(f"uncommitted narrative line {i:05d}\n" for i in range(2000)) + \
        "\n## Retain\n- W @Andy: Turns 40.\n"
    repo.write(LOG, body)
    before = (repo.path / LOG).read_bytes()
    assert len(before) > 60_000
    limit = textwrap.dedent("""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))
        from gitmem.cli import main
        main(sys.argv[1:])
    """)
    proc = subprocess.run([sys.executable, "-c", limit, "-C", str(repo.path), "retain", "W @Peter: Full disk.",
                           "--date", "2025-11-27"], capture_output=True, text=True)
    assert proc.returncode != 0
    assert (repo.path / LOG).read_bytes() == before
    assert not [p for p in (repo.path / "memory").iterdir() if p.name != "2025-11-27.md"], "temp file left behind"


# --- (4) retain racing a user's `git commit -am` ----------------------------------------------------------

def test_retain_racing_a_user_commit_keeps_the_bullet(ws: tuple[GitRepo, Workspace],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    repo, w = ws
    real_commit = retain_mod._commit

    def user_commits_first(*args: object, **kw: object) -> str:
        # The user's `git commit -am` lands between retain's write and retain's commit.
        repo.git("commit", "-qam", "user's own commit")
        return real_commit(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(retain_mod, "_commit", user_commits_first)
    out = retain(w, "W @Peter: Raced a user commit.", day="2025-11-27")
    user_commit = repo.head()
    assert repo.git("log", "-1", "--format=%s") == "user's own commit"
    # The bullet is in the user's commit and still in the file: nothing was rolled back.
    assert "- W @Peter: Raced a user commit." in repo.git("show", f"HEAD:{LOG}")
    assert "- W @Peter: Raced a user commit." in (repo.path / LOG).read_text()
    assert out["committed"] and out["commit"] == user_commit
    assert any("already committed" in n for n in out["notes"])
    monkeypatch.undo()
    # The next retain commits only its own bullet, never a deletion of the first.
    retain(w, "W @Andy: Second fact.", day="2025-11-27")
    diff = repo.git("diff", "HEAD^", "HEAD", "--", LOG)
    assert "-- W @Peter" not in diff and "+- W @Andy: Second fact." in diff


def test_failed_commit_never_rolls_back_bytes_retain_did_not_write(ws: tuple[GitRepo, Workspace]) -> None:
    repo, w = ws
    # A pre-commit hook stands in for the user's editor saving the file while retain commits, then
    # the commit fails: retain must leave the user's bytes alone.
    hook = repo.path / ".git/hooks/pre-commit"
    hook.write_text(f"#!/bin/sh\nprintf 'edited by the user meanwhile\\n' >> '{repo.path / LOG}'\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(GitmemError, match="changed while retain was committing"):
        retain(w, "W: Rejected by the hook.", day="2025-11-27")
    text = (repo.path / LOG).read_text()
    assert text.endswith("- W: Rejected by the hook.\nedited by the user meanwhile\n")


# --- (5) a big retain: the message goes through stdin, a failure leaves nothing behind ---------------------

def test_retain_over_128_kb_commits(ws: tuple[GitRepo, Workspace]) -> None:
    repo, w = ws
    big = "W @Peter: " + "long fact " * 20_000  # ~200 KB: more than one argument may hold (MCP passes these)
    out = retain(w, big, day="2025-11-27")
    assert out["committed"] and out["commit"] == repo.head()
    assert big.strip() in repo.git("log", "-1", "--format=%B")
    assert repo.git("status", "--porcelain") == ""


def test_any_commit_failure_leaves_no_bullet_behind(ws: tuple[GitRepo, Workspace],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    repo, w = ws
    before = (repo.path / LOG).read_bytes()

    def too_big(*args: object, **kw: object) -> str:
        raise OSError(7, "Argument list too long")  # what E2BIG looked like: not a GitmemError

    monkeypatch.setattr(retain_mod, "_commit", too_big)
    with pytest.raises(OSError):
        retain(w, "W: Never committed.", day="2025-11-27")
    assert (repo.path / LOG).read_bytes() == before
    monkeypatch.undo()
    retain(w, "W: Never committed.", day="2025-11-27")
    assert (repo.path / LOG).read_text().count("Never committed") == 1
