"""Uncommitted Markdown edits as a searchable overlay.

The working tree is the newest state of memory, but it is not history: its chunks live in the
`wt_*` tables, never in `chunks`. A dirty file's overlay rows replace that file's committed rows
in "now" queries; `--as-of` queries never see the overlay. Files are re-parsed only when their
size or change time changed since the last refresh: the later of mtime and ctime, since an editor
or `touch -r` can set mtime back but any write moves ctime. A file changed within RACY_NS of being
recorded is recorded as unknown (-1), so it is read again next time: a second edit of the same
size within one tick of the file system's clock leaves both times as they were.
"""

from __future__ import annotations

import sqlite3
import stat
import time

from gitmem.config import load_config
from gitmem.safefile import NotRegular, read_capped, safe_rel
from gitmem.timeline import git
from gitmem.layout import is_memory_markdown
from gitmem.workspace import Workspace


RACY_NS = 2_000_000_000  # past any file system's timestamp granularity that matters here (FAT: 2 s)


def refresh(conn: sqlite3.Connection, ws: Workspace, status: git.Status | None = None) -> list[str]:
    """Bring the overlay in line with the working tree; returns the dirty Markdown paths.
    `status` is a `git status` already started by the caller (else one is run now)."""
    found = status.result() if status is not None else git.status(ws.root)
    dirty = {path: st for st, path in found if is_memory_markdown(path)}
    known = {r[0]: (r[1], r[2], r[3]) for r in conn.execute("SELECT path, mtime_ns, size, deleted FROM wt_files")}
    todo: list[tuple[str, int, int, bool]] = []
    for path, code in dirty.items():
        full = ws.root / path
        try:
            # lstat: an untracked `memory/leak.md -> /etc/shadow` is a link, and links are never
            # read (a link is recorded as deleted: nothing of it is in memory; lint reports it).
            st = full.lstat()
            regular = stat.S_ISREG(st.st_mode) and safe_rel(path)
            sig = (max(st.st_mtime_ns, st.st_ctime_ns), st.st_size, 0) if regular else (0, 0, 1)
        except OSError:
            sig = (0, 0, 1)
        if code == "D":
            sig = (0, 0, 1)
        if known.get(path) != sig:
            todo.append((path, sig[0], sig[1], bool(sig[2])))
    stale = [p for p in known if p not in dirty]
    if not todo and not stale:
        return sorted(dirty)
    max_bytes = load_config(ws).index.max_file_bytes
    now = time.time_ns()
    from gitmem.parse import parse_markdown  # only when a dirty file needs (re)parsing
    conn.execute("BEGIN IMMEDIATE")
    try:
        for path in stale + [t[0] for t in todo]:
            _drop(conn, path)
        for path, mtime, size, deleted in todo:
            recorded = mtime if now - mtime >= RACY_NS else -1
            conn.execute("INSERT INTO wt_files VALUES (?,?,?,?)", (path, recorded, size, int(deleted)))
            if deleted:
                continue
            try:
                # Read through safefile: a folder on the way may still be a symlink, and the file
                # may have been swapped for one since the lstat above.
                data = read_capped(ws.root, path, max_bytes)
            except (NotRegular, OSError):
                continue
            parsed = parse_markdown(data, path, max_bytes=max_bytes)
            for b in parsed.blocks:
                cur = conn.execute(
                    "INSERT INTO wt_chunks (path, start_line, end_line, heading, kind, fact, entities, confidence,"
                    " event_start, event_end, content) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (path, b.start, b.end, " > ".join(b.heading), b.kind, int(b.fact), " ".join(b.entities),
                     b.confidence, b.event_start, b.event_end, b.content),
                )
                conn.execute(
                    "INSERT INTO wt_fts (rowid, content, heading, path, entities) VALUES (?,?,?,?,?)",
                    (cur.lastrowid, b.content, " > ".join(b.heading), path, " ".join(b.entities)),
                )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return sorted(dirty)


def _drop(conn: sqlite3.Connection, path: str) -> None:
    conn.execute(
        "INSERT INTO wt_fts (wt_fts, rowid, content, heading, path, entities)"
        " SELECT 'delete', id, content, heading, path, entities FROM wt_chunks WHERE path = ?",
        (path,),
    )
    conn.execute("DELETE FROM wt_chunks WHERE path = ?", (path,))
    conn.execute("DELETE FROM wt_files WHERE path = ?", (path,))
