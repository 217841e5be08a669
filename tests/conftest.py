"""Shared fixtures: real git repositories in tmp dirs with a sealed git environment.

Every test runs with HOME and the global git config pointing into a tmp dir, so the developer's
or CI machine's own git config (signing, hooksPath, templates, default branch) cannot leak in, and
author/committer dates are pinned per commit so histories are reproducible.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitrepo import GitRepo


@pytest.fixture(autouse=True)
def sealed_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    cfg = home / ".gitconfig"
    cfg.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        "[advice]\n\tdetachedHead = false\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test User")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test User")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.com")
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    monkeypatch.delenv("GIT_INDEX_FILE", raising=False)
    monkeypatch.delenv("GITMEM_MODEL", raising=False)
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[GitRepo]:
    """An empty git repository on branch main."""
    r = GitRepo.init(tmp_path / "ws")
    yield r
