"""Opening the derived index: WAL mode, migrations, recovery from a corrupt or deleted file,
and the single-writer lock.

The index is never the source of truth. When the file is unreadable it is moved aside (kept for a
bug report, not deleted) and rebuilt from git; the caller is told so in plain words.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem import layout
from gitmem.errors import IndexLocked, explain, is_corrupt_index
from gitmem.index import migrations
from gitmem.workspace import Workspace

if TYPE_CHECKING:
    from gitmem.timeline.git import Located


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=10.0, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    # WAL lets recall read while the hook writes; NORMAL sync is safe with WAL (a power cut may lose
    # the last transaction, never corrupt) and the index can always be rebuilt anyway.
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=OFF")
    # 8 MB of page cache: the writes are append-mostly, and a bigger cache only raised peak RSS
    # (32 MB cost +24 MB RSS on a 10k-commit rebuild with no speed gain).
    conn.execute("PRAGMA cache_size=-8000")
    return conn


# Address space (not memory) a reading session maps the index file into; see map_for_reading.
READ_MMAP_BYTES = 1 << 30


def map_for_reading(conn: sqlite3.Connection) -> None:
    """Let SQLite read the index file through a memory map instead of a read() call per page.

    A recall at 1M lines reads a few thousand scattered pages (bm25's document sizes, the ~700
    candidate rows); through the 8 MB page cache each was a system call and a copy, ~40% of the
    in-process time (bench/RESULTS.md, "Recall latency, wave 6"). The map costs address space
    only: pages come from the OS page cache and are shared, and writes still go through SQLite's
    own locking, so a writer in another process is safe (a rebuild unlinks the file, it never
    truncates it under a map). Only the read path asks for it: the indexer's peak RSS would count
    every page it touched."""
    conn.execute(f"PRAGMA mmap_size={READ_MMAP_BYTES}")


def open_index(ws: Workspace) -> tuple[sqlite3.Connection, str | None]:
    """Open (creating or migrating) the index; returns (connection, recovery note or None)."""
    path = ws.derived_file(ws.index_path.name)
    for suffix in ("-wal", "-shm"):  # SQLite opens these beside it, following symlinks
        ws.derived_file(ws.index_path.name + suffix)
    note: str | None = None
    try:
        conn = _connect(path)
        migrations.apply(conn)
        conn.execute("SELECT count(*) FROM meta").fetchone()
        return conn, note
    except sqlite3.DatabaseError as exc:
        try:
            conn.close()
        except Exception:
            pass
        if not is_corrupt_index(exc):
            # A read-only file or folder, a full disk, a lock: the index is fine, the
            # environment is not. Moving a healthy index aside would throw its data away.
            raise explain(exc) or exc from None
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(path) + suffix)
            if p.exists():
                os.replace(p, Path(str(aside) + suffix))
        note = f"the index at {path} was unreadable ({exc}); moved it to {aside.name} and rebuilt it from git"
        conn = _connect(path)
        migrations.apply(conn)
        return conn, note


def target_commit(ws: Workspace, located: Located | None = None) -> str | None:
    """The commit the index should reflect: the configured branch (`index.branch`), else HEAD. A
    configured branch that does not exist is an error, never a silent fall-back to HEAD (that would
    index, and answer from, a different history than the one asked for). `located`: HEAD as the
    call that found the workspace read it (Workspace.find_at_head), instead of asking git again."""
    from gitmem.config import load_config
    from gitmem.errors import GitmemError
    from gitmem.timeline import git

    branch = load_config(ws).index.branch
    if branch:
        oid = git.resolve(ws.root, f"refs/heads/{branch}") or git.resolve(ws.root, branch)
        if oid is None:
            raise GitmemError(f"index.branch = {branch!r} in {ws.config_path} names no branch in this repository",
                              "create that branch, or `gitmem config index.branch \"\"` to index the checked-out branch")
        return oid
    if located is not None and located.root == ws.root:
        return located.head
    return git.head(ws.root)


def unshallowed(ws: Workspace, conn: sqlite3.Connection) -> bool:
    """The index was built from a shallow clone whose missing history has since been fetched
    (`git fetch --unshallow`): it must be rebuilt to include it. Asks git only when the index
    was shallow, so the usual case costs one meta lookup."""
    from gitmem.timeline import git

    return get_meta(conn, "shallow") == "1" and not git.is_shallow(ws.root)


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: sqlite3.Connection, key: str, value: str | None) -> None:
    if value is None:
        conn.execute("DELETE FROM meta WHERE key = ?", (key,))
    else:
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


@contextmanager
def writer_lock(ws: Workspace, wait: float) -> Iterator[None]:
    """Hold the index's single-writer lock (a flock: a SIGKILLed indexer never leaves a stale lock)."""
    busy = IndexLocked("another gitmem indexer is updating this index right now", "wait for it to finish, then run `gitmem index` again")
    with ws.locked(layout.INDEX_LOCK, busy, wait):
        yield
