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


# -- Workspace.find_at_head: the root and HEAD from one git call (a CLI read command's start) ----

def _found(start: Path) -> tuple[object, object]:
    """(find, find_at_head) of `start`: a workspace and HEAD each, or the error each raised."""
    from gitmem.errors import NotAWorkspace
    from gitmem.timeline import git

    def outcome(fn: object) -> object:
        try:
            return fn()  # type: ignore[operator]
        except NotAWorkspace as exc:
            return ("NotAWorkspace", exc.message, exc.hint)

    def two_calls() -> tuple[Workspace, str | None]:
        ws = Workspace.find(start)
        return ws, git.head(ws.root)

    def one_call() -> tuple[Workspace, str | None]:
        ws, located = Workspace.find_at_head(start)
        assert located.root == ws.root
        return ws, located.head

    return outcome(two_calls), outcome(one_call)


def test_find_at_head_answers_as_find_and_head_do(tmp_path: Path) -> None:
    from gitrepo import GitRepo

    repo = GitRepo.init(tmp_path / "ws")
    oid = repo.commit("one", files={"memory.md": "- W @Peter: Lives in Lisbon.\n"})
    (repo.path / "memory" / "deep").mkdir(parents=True)
    empty = GitRepo.init(tmp_path / "empty")  # no commit yet: HEAD names nothing
    (tmp_path / "plain").mkdir()  # no .git at all
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / ".git").symlink_to(repo.path / ".git")  # a .git that is a symlink
    (tmp_path / "via").symlink_to(repo.path / "memory")  # the start reached through a symlink
    cases = {
        "root": (repo.path, (Workspace(repo.path.resolve()), oid)),
        "subdirectory": (repo.path / "memory" / "deep", (Workspace(repo.path.resolve()), oid)),
        "through a symlink": (tmp_path / "via", (Workspace(repo.path.resolve()), oid)),
        "no commit yet": (empty.path, (Workspace(empty.path.resolve()), None)),
    }
    for name, (start, want) in cases.items():
        assert _found(start) == (want, want), name
    for start in (tmp_path / "plain", tmp_path / "linked", repo.path / ".git", tmp_path / "missing"):
        two, one = _found(start)
        assert one == two, start
    two, one = _found(tmp_path / "plain")
    assert one == ("NotAWorkspace", f"{(tmp_path / 'plain').resolve()} is not inside a git repository",
                   "run `gitmem init` there first, or pass -C PATH")


def test_target_commit_takes_head_from_the_call_that_found_the_workspace(tmp_path: Path) -> None:
    from gitmem.config import set_value
    from gitmem.index.db import target_commit
    from gitmem.timeline import git
    from gitrepo import GitRepo

    repo = GitRepo.init(tmp_path / "ws")
    first = repo.commit("one", files={"memory.md": "- W @Peter: Lives in Lisbon.\n"})
    ws, located = Workspace.find_at_head(repo.path)
    assert target_commit(ws, located) == first == git.head(ws.root)
    # HEAD as read for another work tree is not taken for this one.
    assert target_commit(ws, git.Located(tmp_path, "0" * 40)) == first
    # A configured index.branch still wins over HEAD.
    repo.git("branch", "pinned")
    repo.commit("two", files={"memory.md": "- W @Peter: Lives in Porto.\n"})
    set_value(repo.path, "index.branch", "pinned")
    ws, located = Workspace.find_at_head(repo.path)
    assert located.head != first and target_commit(ws, located) == first
