"""Issue 13, wave 6: recall knows what is true now without cue words, by mechanisms that do not
read one set's words: whom a statement is about (a line filed under one person about another
@person is that person's), expiries written as "until <date>" / "through May" without a window,
and two statements that give the same slot a new value. Real git repositories, real index."""

from __future__ import annotations

from pathlib import Path

from gitrepo import GitRepo

from gitmem.index.indexer import update
from gitmem.index.supersede import Statement, supersedes
from gitmem.parse.entities import about_someone_else, subject
from gitmem.recall.result import Result
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace


def log(day: str, *bullets: str) -> dict[str, str]:
    return {f"memory/{day}.md": f"# {day}\n\n## Retain\n" + "".join(f"- {b}\n" for b in bullets)}


def ask(repo: GitRepo, q: str, **kw: object) -> list[Result]:
    with Session(Workspace(repo.path)) as s:
        return s.search(q, Options(**kw)).results  # type: ignore[arg-type]


def top_about(results: list[Result], entity: str) -> str:
    return next(str(r.content) for r in results if entity in r.entities)


def test_whom_a_statement_is_about() -> None:
    # Another @person as the subject of a line filed under someone: that person's statement.
    assert subject("@Linnea: @Anders opened his own studio and left the design agency.") == "anders"
    assert subject("@Linnea: Her husband @Anders is a furniture designer.") == "anders"
    assert subject("@Emeka: His son @Chidi moved to Lagos for university.") == "chidi"
    # An unnamed relative, or someone's relative: about someone, not the filed entity.
    assert subject("@Kira: Her brother lives in Seoul.") == ""
    assert subject("@Sam: @Zoe's parents moved to Leicester.") == ""
    # The filed entity itself, alone or with someone ("She and @Declan", "@Declan and she").
    assert subject("@Linnea: Left Spotify; joined Klarna as director of product.") is None
    assert subject("@Niamh: She and @Declan tied the knot at Kylemore Abbey.") is None
    assert subject("@Niamh: @Declan and she tied the knot.") is None
    assert subject("@Henrike: Her recipe-scaling app went live.") is None  # her thing, not a relative
    assert subject("@Alice moved to Madrid with @Bob.") is None
    assert about_someone_else("@Linnea: @Anders left the design agency.")
    assert not about_someone_else("@Linnea: Left Spotify for @Klarna.")


def test_another_persons_change_never_replaces_or_passes_the_filed_persons_own(tmp_path: Path) -> None:
    """Regression (held-out 2, wave 5): "@Anders opened his own studio ... and left the design
    agency", filed under Linnea, ranked above Linnea's own job for "Where does Linnea work?"."""
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("a", "2026-01-26", {".gitignore": ".memory/\n", **log(
        "2026-01-26", "W @Linnea: Product manager at Spotify in Stockholm.",
        "W @Linnea: Her husband @Anders is a furniture designer at an agency.")})
    repo.commit("b", "2026-03-16", log("2026-03-16", "W @Linnea: @Anders opened his own studio in Gamla Stan "
                                                     "and left the design agency."))
    repo.commit("c", "2026-04-27", log("2026-04-27", "W @Linnea: Left Spotify; joined Klarna as director of product.",
                                       "W @Linnea: @Anders works as a carpenter in Uppsala."))
    update(Workspace(repo.path))
    assert "Product manager at Spotify" in top_about(ask(repo, "Where does Linnea work?", as_of="2026-04-01"), "linnea")
    assert "joined Klarna" in top_about(ask(repo, "Where does Linnea work?", as_of="2026-06-01"), "linnea")
    # Anders's own statements do follow each other: his newer work is the answer about him.
    assert "carpenter in Uppsala" in top_about(ask(repo, "What does Anders do for work?", as_of="2026-06-01"),
                                               "anders")
    # Nothing about Anders is ever taken for a replacement of Linnea's job (index side).
    old = Statement("memory/2026-01-26.md", "world", True, ("linnea",), "@Linnea: Works at Spotify.", None)
    new = Statement("memory/2026-03-16.md", "world", True, ("linnea", "anders"),
                    "@Linnea: @Anders left Spotify; now works at a studio.", None)
    assert supersedes(new, old) is None
    assert supersedes(new._replace(content="@Linnea: Left Spotify; now works at a studio."), old)
