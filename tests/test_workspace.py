"""Workspace is a small immutable value (a plain class, kept off the hook's dataclasses import)."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from gitmem.layout import is_memory_markdown
from gitmem.workspace import Workspace


def test_value_semantics(tmp_path: Path) -> None:
    ws = Workspace(str(tmp_path))
    assert ws.root == tmp_path and isinstance(ws.root, Path)
    assert ws == Workspace(tmp_path) and hash(ws) == hash(Workspace(tmp_path)) and ws != Workspace(tmp_path / "x")
    assert pickle.loads(pickle.dumps(ws)) == ws and copy.deepcopy(ws) == ws
    with pytest.raises(AttributeError):
        ws.root = tmp_path / "other"  # type: ignore[misc]
    assert ws.index_path == tmp_path / ".memory" / "index.sqlite"


@pytest.mark.parametrize(("rel", "memory"), [
    ("memory.md", True), ("memory/2025-11-27.MD", True), ("bank/entities/Peter.md", True),
    (".memory/notes.md", False), (".git/x.md", False), ("memory/photo.png", False),
])
def test_memory_markdown_rule(rel: str, memory: bool) -> None:
    assert is_memory_markdown(rel) is memory


def test_citation_format_and_parser_are_one_rule() -> None:
    from gitmem import layout

    oid = "1a2b3c4d5e6f" + "0" * 28
    assert layout.citation("memory/2025-11-27.md", 12, 13, oid) == "memory/2025-11-27.md#L12-L13@1a2b3c4"
    assert layout.citation("memory.md", 4, 4, None) == "memory.md#L4@worktree"
    for path, start, end, rev in (("memory/2025-11-27.md", 12, 13, oid), ("bank/entities/Peter.md", 1, 1, None)):
        parsed = layout.parse_citation(" " + layout.citation(path, start, end, rev) + "\n")
        assert parsed == layout.Citation(path, start, end, rev[:7] if rev else layout.WORKTREE_REV)
    assert layout.parse_citation("memory.md#L2-3@abcd") == layout.Citation("memory.md", 2, 3, "abcd")
    for bad in ("memory.md", "memory.md#L4", "memory.md#4@abc1234", "memory.md#L4@xyz"):
        assert layout.parse_citation(bad) is None, bad
    assert layout.entity_page_stem(layout.entity_page_path("The-Castle")) == "The-Castle"
    assert layout.entity_page_stem("bank/entitiesX/Peter.md") is None  # the slash is part of the name
    assert layout.log_date(layout.log_path("2025-11-27")).isoformat() == "2025-11-27"  # type: ignore[union-attr]
