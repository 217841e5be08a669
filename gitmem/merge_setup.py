"""Installing the merge driver: `.gitattributes` lines (committed, shared by every clone) and the
`merge.gitmem.*` git config (per clone, in .git/config).

The two halves live apart on purpose: git only runs a driver that the clone's own config names,
so a clone where gitmem is not installed reads `merge=gitmem`, finds no `merge.gitmem.driver` and
merges those files as ordinary text. Installing in one clone never makes another clone's merges
fail.

Which files: daily logs (`memory/*.md`), bank pages (`bank/**/*.md`), the reflection state
(`bank/.reflect.json`) and `memory.md`. memory.md is included because the driver only ever adds
what both sides added and hands every real edit to `git merge-file`, so it can only turn an
append/append conflict into a clean merge, never hide an edit.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import NamedTuple

from gitmem import layout
from gitmem.layout import ATTRIBUTES_FILE
from gitmem.safefile import refuse_symlink, write_atomic
from gitmem.timeline import git
from gitmem.workspace import Workspace

DRIVER = "gitmem"
BEGIN = "# gitmem merge driver: begin (written by `gitmem hooks install`, removed by `gitmem hooks uninstall`)"
END = "# gitmem merge driver: end"
PATTERNS = (f"/{layout.CORE_FILE}", f"{layout.LOG_DIR}/*.md", f"{layout.BANK_DIR}/**/*.md", layout.STATE_PATH)
NAME = "gitmem: merge memory line-wise (both sides' facts kept once)"


class DriverStatus(NamedTuple):
    attributes: bool  # our block is in .gitattributes
    configured: bool  # merge.gitmem.driver is set in this clone
    command: str | None

    def as_dict(self) -> dict[str, object]:
        return {"attributes": self.attributes, "configured": self.configured, "command": self.command}


def block() -> list[str]:
    return [BEGIN, *(f"{p} merge={DRIVER}" for p in PATTERNS), END]


def command(python: str | None = None) -> str:
    """The driver command git runs (through the shell): this interpreter, so a venv install works
    without gitmem on PATH. -P keeps the work tree off sys.path."""
    return f"{shlex.quote(python or sys.executable)} -P -m gitmem merge-driver %O %A %B %P"


def _attributes(ws: Workspace) -> Path:
    path = ws.root / ATTRIBUTES_FILE
    refuse_symlink(path, ATTRIBUTES_FILE)
    return path


def _strip_block(lines: list[str]) -> list[str]:
    out: list[str] = []
    inside = False
    for line in lines:
        if line == BEGIN:
            inside = True
        elif line == END and inside:
            inside = False
        elif not inside:
            out.append(line)
    return out


def _write(path: Path, text: str) -> None:
    write_atomic(path, text.encode("utf-8"))


def status(ws: Workspace) -> DriverStatus:
    path = ws.root / ATTRIBUTES_FILE
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else []
    has_block = all(line in lines for line in block())
    cmd = git.out(ws.root, "config", "--local", "--get", f"merge.{DRIVER}.driver", check=False) or None
    return DriverStatus(has_block, cmd is not None, cmd)


def install(ws: Workspace, python: str | None = None) -> list[str]:
    """Write our .gitattributes block and the driver config; returns what changed (idempotent)."""
    changed: list[str] = []
    path = _attributes(ws)
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    lines = _strip_block(old.splitlines()) if old is not None else []
    while lines and not lines[-1].strip():
        lines.pop()
    new = "\n".join([*lines, *([""] if lines else []), *block()]) + "\n"
    if new != old:
        _write(path, new)
        changed.append(f"{'updated' if old is not None else 'created'} {ATTRIBUTES_FILE} (merge=gitmem for memory files;"
                       " commit it so every clone uses it)")
    cmd = command(python)
    if git.out(ws.root, "config", "--local", "--get", f"merge.{DRIVER}.driver", check=False) != cmd:
        git.run(ws.root, ["config", "--local", f"merge.{DRIVER}.name", NAME])
        git.run(ws.root, ["config", "--local", f"merge.{DRIVER}.driver", cmd])
        changed.append(f"configured merge.{DRIVER}.driver in this clone's git config")
    return changed


def uninstall(ws: Workspace) -> list[str]:
    """Remove our .gitattributes block (the file too when nothing else is left) and the config."""
    changed: list[str] = []
    path = _attributes(ws)
    if path.is_file():
        old = path.read_text(encoding="utf-8")
        lines = _strip_block(old.splitlines())
        if lines != old.splitlines():
            while lines and not lines[-1].strip():
                lines.pop()
            if lines:
                _write(path, "\n".join(lines) + "\n")
                changed.append(f"removed the merge driver lines from {ATTRIBUTES_FILE}")
            else:
                path.unlink()
                changed.append(f"removed {ATTRIBUTES_FILE} (it held only the merge driver lines)")
    if git.ok(ws.root, "config", "--local", "--get-regexp", rf"^merge\.{DRIVER}\."):
        git.run(ws.root, ["config", "--local", "--remove-section", f"merge.{DRIVER}"])
        changed.append(f"removed merge.{DRIVER} from this clone's git config")
    return changed
