"""Workspace lint: parse every Markdown file of the workspace and collect the diagnostics.

The per-file checks are the parser's own diagnostics (parse/ stays pure); this module is the floor
above it that asks git which files there are and reads them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.layout import is_memory_markdown
from gitmem.parse.blocks import parse_markdown
from gitmem.parse.model import Diagnostic
from gitmem.timeline import git


def workspace_markdown(root: Path) -> list[str]:
    """Workspace-relative paths of the tracked and untracked (not ignored) *.md files, sorted.

    Asking git (rather than walking the disk) skips ignored files and nested repositories the way
    the indexer does; deleted-but-tracked files are left out because there is nothing to read.
    """
    raw = git.run(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]).stdout
    paths = set()
    for entry in raw.split(b"\0"):
        rel = entry.decode("utf-8", "surrogateescape")
        if not is_memory_markdown(rel):
            continue
        if (root / rel).is_file():
            paths.add(rel)
    return sorted(paths)


def _select(root: Path, all_md: list[str], targets: Sequence[Path]) -> list[str]:
    """The workspace files named by `targets` (files, or directories meaning every .md below)."""
    chosen: dict[str, None] = {}
    for target in targets:
        absolute = target.resolve()
        try:
            rel = absolute.relative_to(root).as_posix()
        except ValueError:
            raise GitmemError(f"{target} is outside the workspace {root}", "pass paths inside the workspace") from None
        if absolute.is_dir():
            prefix = "" if rel == "." else rel + "/"
            chosen.update(dict.fromkeys(p for p in all_md if p.startswith(prefix)))
        elif absolute.is_file():
            chosen[rel] = None  # named explicitly: linted whatever its extension
        else:
            raise GitmemError(f"no such file or directory: {target}", "check the path and try again")
    return list(chosen)


def lint_paths(root: Path, rels: Iterable[str], *, max_bytes: int | None = None) -> list[Diagnostic]:
    """Diagnostics of the given workspace-relative files, in path then line order."""
    diagnostics: list[Diagnostic] = []
    for rel in rels:
        try:
            data = (root / rel).read_bytes()
        except OSError as exc:
            diagnostics.append(Diagnostic(rel, 1, "unreadable", f"cannot read the file: {exc.strerror or exc}"))
            continue
        diagnostics.extend(parse_markdown(data, rel, max_bytes=max_bytes).diagnostics)
    return diagnostics


def lint_workspace(
    root: Path, targets: Sequence[Path] = (), *, max_bytes: int | None = None
) -> tuple[int, list[Diagnostic]]:
    """Lint the workspace's Markdown (or only `targets`, absolute or cwd-relative paths inside it).
    Returns (files checked, diagnostics)."""
    root = root.resolve()
    all_md = workspace_markdown(root)
    rels = _select(root, all_md, targets) if targets else all_md
    return len(rels), lint_paths(root, rels, max_bytes=max_bytes)
