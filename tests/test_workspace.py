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
