"""An independent oracle for the index: what memory held at a commit, computed straight from git.

It reads every Markdown file in the commit's tree with `git show` and parses it, without the
indexer's diff walking, so tests can compare the index (built incrementally from patches) with
the truth at each point of history.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from gitmem.layout import is_bookkeeping
from gitmem.parse import parse_markdown
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace


def tree_chunks(repo: Path, oid: str, max_bytes: int = 5_000_000) -> set[tuple[str, str]]:
    names = subprocess.run(
        ["git", "-C", str(repo), "-c", "core.quotePath=false", "ls-tree", "-r", "-z", "--name-only", oid],
        capture_output=True, check=True,
    ).stdout.split(b"\0")
    out: set[tuple[str, str]] = set()
    for raw in names:
        name = raw.decode("utf-8", "surrogateescape")
        if not name.lower().endswith(".md"):
            continue
        data = subprocess.run(["git", "-C", str(repo), "cat-file", "blob", f"{oid}:{name}"],
                              capture_output=True, check=True).stdout
        # A block left with no text once HTML comments are stripped (a generated-block marker,
        # template guidance), or an opinion's bookkeeping line in bank/opinions.md ("confidence:
        # 0.70 (stated ...)"), is indexed but never recalled.
        out |= {(name, b.content) for b in parse_markdown(data, name, max_bytes=max_bytes).blocks
                if b.content and not is_bookkeeping(name, b.content)}
    return out


def recalled(ws: Workspace, as_of: str | None, **kw: object) -> set[tuple[str, str]]:
    with Session(ws) as s:
        # What the index holds, not what recall ranks: the currency step (recall/currency.py) would
        # collapse bank copies into their originals (collapse=False: every place is listed) and
        # leave replaced statements out.
        s._has_links = False
        ans = s.search("", Options(k=100000, as_of=as_of, collapse=False, **kw))  # type: ignore[arg-type]
    return {(r.path, r.content) for r in ans.results}


def index_rows(ws: Workspace) -> list[tuple]:
    """The committed history tables' content, with ids dropped (comparable across builds)."""
    import sqlite3

    conn = sqlite3.connect(ws.index_path)
    try:
        return sorted(conn.execute(
            "SELECT c.path, c.start_line, c.end_line, c.kind, c.content, c.valid_from, c.valid_to,"
            " s.content FROM chunks c LEFT JOIN chunks s ON s.id = c.successor"
        ).fetchall(), key=repr)
    finally:
        conn.close()
