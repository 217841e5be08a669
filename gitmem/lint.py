"""Workspace lint: parse every Markdown file of the workspace and collect the diagnostics.

The per-file checks are the parser's own diagnostics (parse/ stays pure); this module is the floor
above it that asks git which files there are and reads them."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.layout import is_memory_markdown
from gitmem.parse.blocks import parse_markdown
from gitmem.parse.model import Diagnostic
from gitmem.safefile import NotRegular, read_capped
from gitmem.timeline import git
from gitmem.lazyre import lazy



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
        if os.path.lexists(root / rel):  # a symlink too: lint_paths reports it instead of reading it
            paths.add(rel)
    return sorted(paths)


def _select(root: Path, all_md: list[str], targets: Sequence[Path]) -> list[str]:
    """The workspace files named by `targets` (files, or directories meaning every .md below)."""
    chosen: dict[str, None] = {}
    for target in targets:
        absolute = Path(os.path.abspath(target))  # not resolve(): a symlink is reported, not followed
        try:
            rel = absolute.relative_to(root).as_posix()
        except ValueError:
            raise GitmemError(f"{target} is outside the workspace {root}", "pass paths inside the workspace") from None
        if absolute.is_dir():
            prefix = "" if rel == "." else rel + "/"
            chosen.update(dict.fromkeys(p for p in all_md if p.startswith(prefix)))
        elif absolute.is_file() or absolute.is_symlink():
            chosen[rel] = None  # named explicitly: linted whatever its extension
        else:
            raise GitmemError(f"no such file or directory: {target}", "check the path and try again")
    return list(chosen)


# Terminal control characters (C0 except tab/newline/CR, DEL, C1): an ESC sequence in a bullet can
# rewrite what a terminal shows; they are escaped on output, and lint says where they are.
_CONTROL = lazy("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# A merge left unresolved: the markers are memory text nobody meant to keep.
_CONFLICT = lazy(r"^(?:<{7}(?: |$)|={7}$|>{7}(?: |$)|\|{7}(?: |$))")
_UNLIMITED = 5_000_000  # the index's default max_file_bytes, when the caller names no limit


def _text_problems(rel: str, data: bytes) -> list[Diagnostic]:
    text = data.decode("utf-8", "replace")
    found: list[Diagnostic] = []
    if "\x00" in text[:8192]:
        return found  # binary: parse_markdown already says so
    for n, line in enumerate(text.split("\n"), 1):
        m = _CONTROL.search(line.rstrip("\r"))
        if m:
            found.append(Diagnostic(rel, n, "control-character",
                                    f"control character U+{ord(m.group()):04X} (shown escaped in output)"))
        if _CONFLICT.match(line):
            found.append(Diagnostic(rel, n, "conflict-marker", "merge conflict marker left in the file"))
    return found


def lint_paths(root: Path, rels: Iterable[str], *, max_bytes: int | None = None) -> list[Diagnostic]:
    """Diagnostics of the given workspace-relative files, in path then line order. Symlinks and
    other non-regular files are reported, never read; at most `max_bytes` + 1 bytes are read."""
    diagnostics: list[Diagnostic] = []
    for rel in rels:
        try:
            data = read_capped(root, rel, max_bytes if max_bytes is not None else _UNLIMITED)
        except NotRegular:
            code = "symlink" if os.path.islink(root / rel) else "not-regular"
            diagnostics.append(Diagnostic(rel, 1, code, "a symlink or not a regular file: not read, not indexed"))
            continue
        except OSError as exc:
            diagnostics.append(Diagnostic(rel, 1, "unreadable", f"cannot read the file: {exc.strerror or exc}"))
            continue
        parsed = parse_markdown(data, rel, max_bytes=max_bytes).diagnostics
        extra = [] if any(d.code == "too-large" for d in parsed) else _text_problems(rel, data)
        diagnostics.extend(sorted([*parsed, *extra], key=lambda d: d.line))
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
