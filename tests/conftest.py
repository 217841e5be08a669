"""Shared fixtures: real git repositories in tmp dirs with a sealed git environment.

Every test runs with HOME and the global git config pointing into a tmp dir, so the developer's
or CI machine's own git config (signing, hooksPath, templates, default branch) cannot leak in, and
author/committer dates are pinned per commit so histories are reproducible.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gitrepo import GitRepo, seal_git_env


@pytest.fixture(autouse=True)
def sealed_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    seal_git_env(monkeypatch, home)
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[GitRepo]:
    """An empty git repository on branch main."""
    r = GitRepo.init(tmp_path / "ws")
    yield r
