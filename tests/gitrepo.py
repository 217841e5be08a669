"""A tiny driver for real git repositories in tests (pinned dates, real `git` commands)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitmem.demo import DemoInfo, build_demo


def seal_git_env(mp: pytest.MonkeyPatch, home: Path) -> None:
    """Point HOME and the global git config at `home`, so the machine's own git config (signing,
    hooksPath, templates, default branch) cannot leak into a test, and pin the identity."""
    cfg = home / ".gitconfig"
    cfg.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        "[advice]\n\tdetachedHead = false\n"
    )
    mp.setenv("HOME", str(home))
    mp.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        mp.setenv(f"GIT_{role}_NAME", "Test User")
        mp.setenv(f"GIT_{role}_EMAIL", "test@example.com")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GITMEM_MODEL"):
        mp.delenv(var, raising=False)


def sealed_demo(tmp_path_factory: pytest.TempPathFactory, name: str) -> DemoInfo:
    """Build the demo workspace under a sealed git environment. For module-scoped fixtures: they
    are set up before the function-scoped `sealed_git` fixture of their first test."""
    with pytest.MonkeyPatch.context() as mp:
        seal_git_env(mp, tmp_path_factory.mktemp(f"{name}-home"))
        return build_demo(tmp_path_factory.mktemp(name) / "ws")


def _iso(date: str) -> str:
    # "2025-11-27" -> noon UTC that day, so date-only fixtures are unambiguous in any timezone.
    return f"{date}T12:00:00+00:00" if len(date) == 10 else date


@dataclass
class GitRepo:
    path: Path

    @classmethod
    def init(cls, path: Path) -> GitRepo:
        path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
        return cls(path)

    def git(self, *args: str, date: str | None = None, input: str | None = None, check: bool = True) -> str:
        env = dict(os.environ)
        if date:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = _iso(date)
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args], capture_output=True, text=True, env=env, input=input
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    def write(self, rel: str, content: str | bytes) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_bytes(content.encode("utf-8"))
        return p

    def remove(self, rel: str) -> None:
        (self.path / rel).unlink()

    def commit(self, message: str, date: str = "2025-11-01", files: dict[str, str | bytes] | None = None) -> str:
        """Write `files`, stage everything and commit with pinned author and committer dates."""
        for rel, content in (files or {}).items():
            self.write(rel, content)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message, date=date)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def fast_import(self, stream: str) -> None:
        """Build history with `git fast-import` (exact dates, no working tree churn)."""
        self.git("fast-import", "--quiet", input=stream)
