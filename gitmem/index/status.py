"""What `gitmem status` reports: how the index relates to the repository right now."""

from __future__ import annotations

from typing import Any

from gitmem.index import vectors
from gitmem.index.db import get_meta, open_index, target_commit, unshallowed
from gitmem.timeline import git
from gitmem.layout import is_memory_markdown
from gitmem.workspace import Workspace


def workspace_status(ws: Workspace, last_hook_error: str | None = None,
                     embed_missing: str | None = None) -> dict[str, Any]:
    """Indexed commit, HEAD, how far behind, row counts, vectors, uncommitted Markdown, and the
    last hook error (read by the caller from githooks, which sits above the index), and why the
    embed extra cannot run (None: it can; the caller asks recall, which sits above it too)."""
    head = target_commit(ws)
    exists = ws.index_path.exists()
    conn, note = open_index(ws)
    try:
        tip = get_meta(conn, "tip")
        counts = {
            "commits": conn.execute("SELECT count(*) FROM commits").fetchone()[0],
            "chunks_current": conn.execute("SELECT count(*) FROM chunks WHERE valid_to IS NULL").fetchone()[0],
            "chunks_total": conn.execute("SELECT count(*) FROM chunks").fetchone()[0],
            "facts_current": conn.execute(
                "SELECT count(*) FROM chunks WHERE valid_to IS NULL AND fact = 1"
            ).fetchone()[0],
            "entities": conn.execute(
                "SELECT count(DISTINCT entity) FROM chunk_entities"
            ).fetchone()[0],
        }
        cov = vectors.coverage(conn)
        problems = [
            {"path": r[0], "code": r[1], "message": r[2]}
            for r in conn.execute(
                "SELECT p.path, p.code, p.message FROM problems p"
                " JOIN (SELECT path, max(pos) AS pos FROM problems GROUP BY path) last"
                " ON last.path = p.path AND last.pos = p.pos ORDER BY p.path LIMIT 50"
            )
        ]
        # After `git fetch --unshallow` the index is no longer what the repository holds: the
        # next update rebuilds it, so say "not shallow, not up to date" rather than the old state.
        refetched = unshallowed(ws, conn)
        shallow = get_meta(conn, "shallow") == "1" and not refetched
    finally:
        conn.close()
    if tip is None or head is None:
        behind: int | None = 0 if head is None else None
    elif refetched:
        behind = None
    elif tip == head:
        behind = 0
    elif git.is_ancestor(ws.root, tip, head):
        behind = len(git.first_parent_oids(ws.root, head, since=tip))
    else:
        behind = None  # rewritten history: the next update rolls back first
    return {
        "workspace": str(ws.root),
        "branch": git.current_branch(ws.root),
        "head": head,
        "indexed": tip,
        "behind": behind,
        "up_to_date": tip == head and not refetched,
        "index_path": str(ws.index_path),
        "index_existed": exists,
        "recovered": note,
        "shallow": shallow,
        "counts": counts,
        "vectors": {**cov._asdict(), "extra_installed": embed_missing is None, "extra_missing": embed_missing},
        "uncommitted": [p for _, p in git.status(ws.root) if is_memory_markdown(p)],
        "problems": problems,
        "last_hook_error": last_hook_error,
    }
