"""Where a memory workspace lives: its root, its derived-data folder and its config file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitmem.timeline import git

DERIVED_DIR = ".memory"
CONFIG_FILE = ".gitmem.toml"


@dataclass(frozen=True)
class Workspace:
    """A git work tree used as memory. Each worktree has its own derived index."""

    root: Path

    @classmethod
    def find(cls, start: Path | str) -> Workspace:
        """The workspace containing `start`; raises NotAWorkspace with a next step otherwise."""
        return cls(git.toplevel(start).resolve())

    @property
    def derived(self) -> Path:
        return self.root / DERIVED_DIR

    @property
    def index_path(self) -> Path:
        return self.derived / "index.sqlite"

    @property
    def hook_log(self) -> Path:
        return self.derived / "hook.log"

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_FILE

    def ensure_derived(self) -> Path:
        self.derived.mkdir(parents=True, exist_ok=True)
        return self.derived
