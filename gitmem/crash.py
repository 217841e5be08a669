"""The last line of defence at the edges (CLI, MCP server): any exception becomes one line.

A known environment failure (full disk, read-only index, a file where a folder belongs) is
explained by `errors.explain`; anything else is a bug, reported as an InternalError whose hint
says where the traceback went: appended to `.memory/error.log` (only when that is a real folder:
never through a symlink) or, with GITMEM_DEBUG=1, printed to stderr.
"""

from __future__ import annotations

import os
import sys
import traceback
from datetime import UTC, datetime
from pathlib import Path

from gitmem.errors import GitmemError, InternalError, explain
from gitmem.workspace import Workspace

ERROR_LOG = "error.log"
_LOG_LIMIT = 1_000_000  # bytes kept in error.log; older entries are dropped first


def debug() -> bool:
    return os.environ.get("GITMEM_DEBUG", "") not in ("", "0")


def record(root: Path | None, exc: BaseException, context: str) -> Path | None:
    """Append `exc`'s traceback to the workspace's error log; the log's path, or None if it could
    not be written (no workspace, .memory missing, a symlink, read-only, full)."""
    if root is None:
        return None
    try:
        derived = Workspace(root).derived
        if derived.is_symlink() or not derived.is_dir():
            return None
        log = derived / ERROR_LOG
        if log.is_symlink():
            return None
        if log.exists() and log.stat().st_size > _LOG_LIMIT:
            log.unlink()
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        text = "".join(traceback.format_exception(exc))
        with log.open("a", encoding="utf-8", errors="replace") as fh:
            fh.write(f"--- {stamp} {context}\n{text}")
        return log
    except Exception:
        return None


def as_error(exc: BaseException, root: Path | None, context: str) -> GitmemError:
    """`exc` as the one-line error a user sees. Unexpected ones are logged first (see module doc)."""
    known = explain(exc)
    if known is not None:
        return known
    if debug():
        traceback.print_exception(exc, file=sys.stderr)
        where = "the traceback is printed above"
    else:
        log = record(root, exc, context)
        where = (f"details are in {log}" if log else "rerun with GITMEM_DEBUG=1 to see the details")
    message = " ".join(str(exc).split())[:300] or "(no message)"
    return InternalError(f"unexpected error: {type(exc).__name__}: {message}",
                         f"this is a bug in gitmem; {where} (please include them in a report)")


def find_root(directory: Path | str | None) -> Path | None:
    """The workspace root for `directory`, or None (never raises: used while reporting an error)."""
    try:
        return Workspace.find(directory or Path.cwd()).root
    except Exception:
        return None
