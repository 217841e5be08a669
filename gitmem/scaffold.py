"""`gitmem init`: turn a folder into a memory workspace without touching what is already there.

The layout comes from the `gitmem._templates` package data so an installed wheel carries it. Files
are created with O_EXCL: an existing path is never overwritten, only reported as skipped. The one
edit to a user's file is appending `.memory/` to an existing .gitignore that lacks it. Nothing is
staged or committed: the user decides what enters their history.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from gitmem.errors import GitmemError
from gitmem.layout import CONFIG_FILE, DERIVED_DIR
from gitmem.templates import template
from gitmem.timeline import git
from gitmem.workspace import Workspace

IGNORE_LINE = f"{DERIVED_DIR}/"

# package-data globs skip dotfiles, so templates are stored without the dot and renamed on write.
_DOT_NAMES = {"gitkeep": ".gitkeep", "gitignore": ".gitignore", "gitmem.toml": CONFIG_FILE}


@dataclass
class InitReport:
    root: Path
    created: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    updated: list[tuple[str, str]] = field(default_factory=list)  # (path, what changed)
    git_initialized: bool = False
    hooks: Any = None  # githooks.install's report, or None when hooks were not installed

    def as_dict(self) -> dict[str, Any]:
        hooks = self.hooks
        if hasattr(hooks, "as_dict"):
            hooks = hooks.as_dict()
        elif dataclasses.is_dataclass(hooks) and not isinstance(hooks, type):
            hooks = dataclasses.asdict(hooks)
        elif hooks is not None and not isinstance(hooks, dict | list | str):
            hooks = str(hooks)
        return {
            "root": str(self.root),
            "git_initialized": self.git_initialized,
            "created": self.created,
            "updated": [{"path": p, "change": c} for p, c in self.updated],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "hooks": hooks,
        }



def _walk(node: Traversable, prefix: str = "") -> list[tuple[str, bytes]]:
    """(workspace-relative path, content) for every file under a template folder, sorted."""
    out: list[tuple[str, bytes]] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name.startswith((".", "__")):  # __pycache__, editor droppings
            continue
        name = _DOT_NAMES.get(child.name, child.name)
        rel = f"{prefix}{name}"
        if child.is_dir():
            out.extend(_walk(child, rel + "/"))
        else:
            out.append((rel, child.read_bytes()))
    return out


def layout_files() -> list[tuple[str, bytes]]:
    """Every file a new workspace gets, as (relative path, bytes). The demo reuses this."""
    files_ = _walk(template("workspace"))
    files_.append((".gitignore", template("gitignore").read_bytes()))
    files_.append((CONFIG_FILE, template("gitmem.toml").read_bytes()))
    return sorted(files_)


def _ensure_repo(path: Path) -> bool:
    """git init `path` unless it already is a work tree's top level. Returns True when it ran git init."""
    proc = git.run(path, ["rev-parse", "--show-toplevel"], check=False)
    if proc.returncode == 0:
        top = Path(proc.stdout.decode("utf-8", "surrogateescape").strip()).resolve()
        if top != path.resolve():
            # A memory workspace is a whole work tree (recall, hooks and the index are per repo).
            raise GitmemError(
                f"{path} is inside the git repository {top}, not at its top level",
                f"run `gitmem init {top}` to use that whole repository, "
                f"or `git init {path}` first to give the memory its own repository",
            )
        return False
    if git.out(path, "rev-parse", "--is-bare-repository", check=False) == "true":
        raise GitmemError(f"{path} is a bare git repository", "clone it and run `gitmem init` in the clone")
    git.run(path, ["init", "-q"])
    return True


def _create(root: Path, rel: str, data: bytes, report: InitReport) -> None:
    target = root / rel
    # Walk the parents ourselves: a user's *file* named like one of our folders must be reported,
    # not turned into an error halfway through.
    for parent in reversed(Path(rel).parents[:-1]):
        p = root / parent
        if os.path.lexists(p) and not p.is_dir():
            report.skipped.append((rel, f"{parent.as_posix()} exists and is not a folder"))
            return
    if os.path.lexists(target):
        kind = "file" if target.is_file() else "not a regular file"
        report.skipped.append((rel, f"already exists ({kind}); left untouched"))
        return
    if target.name == ".gitkeep" and target.parent.is_dir() and any(target.parent.iterdir()):
        # .gitkeep only exists to make git track an empty folder; a folder with files needs none.
        report.skipped.append((rel, "folder already has files"))
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(target, "xb") as fh:
            fh.write(data)
    except FileExistsError:  # created between our check and open
        report.skipped.append((rel, "already exists; left untouched"))
        return
    report.created.append(rel)


def _ensure_ignored(root: Path, data: bytes, report: InitReport) -> None:
    """Create .gitignore, or append `.memory/` to the user's own when no line ignores it yet."""
    path = root / ".gitignore"
    if not os.path.lexists(path):
        _create(root, ".gitignore", data, report)
        return
    if path.is_symlink() or not path.is_file():  # a symlink: appending would write wherever it points
        report.skipped.append((".gitignore", f"exists and is not a regular file; add {IGNORE_LINE} to it by hand"))
        return
    existing = path.read_bytes()
    patterns = {line.strip() for line in existing.decode("utf-8", "replace").splitlines()}
    d = DERIVED_DIR
    if patterns & {d, f"{d}/", f"/{d}", f"/{d}/", f"{d}/*", f"/{d}/*"}:
        report.skipped.append((".gitignore", f"already ignores {IGNORE_LINE}"))
        return
    sep = b"" if not existing or existing.endswith(b"\n") else b"\n"
    with open(path, "ab") as fh:  # append only: the user's lines stay byte-for-byte as they were
        fh.write(sep + IGNORE_LINE.encode() + b"\n")
    report.updated.append((".gitignore", f"appended {IGNORE_LINE}"))


def init_workspace(path: Path, *, install_hooks: bool = True) -> InitReport:
    """Make `path` a memory workspace: git repo, layout, .gitignore, config and (optionally) hooks.

    Idempotent and non-destructive: existing files are skipped with a reason, never rewritten.
    Does not stage or commit anything.
    """
    path = Path(path).expanduser()
    if os.path.lexists(path) and not path.is_dir():
        raise GitmemError(f"{path} exists and is not a folder", "pick a folder (it is created if missing)")
    path.mkdir(parents=True, exist_ok=True)
    root = path.resolve()
    report = InitReport(root=root)
    report.git_initialized = _ensure_repo(root)
    for rel, data in layout_files():
        if rel == ".gitignore":
            _ensure_ignored(root, data, report)
        else:
            _create(root, rel, data, report)
    if install_hooks:
        _install_hooks(Workspace(root), report)
    return report


def _install_hooks(ws: Workspace, report: InitReport) -> None:
    from gitmem import githooks

    try:
        report.hooks = githooks.install(ws)
    except GitmemError as exc:
        # e.g. husky's core.hooksPath: the workspace is still set up; say why there are no hooks.
        report.hooks = githooks.HooksReport(githooks.hooks_dir(ws), [], [f"not installed: {exc}"])
