"""A move replaces the home it left, not a line that already told the new one (issue 13, wave 21).

The demo's own history had it: Peter edited memory.md to "@Peter lives in Lisbon (Alfama)" on the
morning of the move, and the day's log then said "Moved from Berlin to Lisbon on 2025-11-20": the
index linked the move to the memory.md line as its successor ("cue 'moved from', same attribute"),
so the user's own statement of where he lives was hidden as superseded by a line that agrees with
it. Real git repository, real index, real recall."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gitrepo import GitRepo
from test_current_truth_wave7 import history

from gitmem.index.indexer import update
from gitmem.parse.attributes import move_places
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace


def superseded(root: Path) -> dict[str, str]:
    """{old line: the line the index says replaced it}."""
    con = sqlite3.connect(Workspace(root).index_path)
    try:
        return dict(con.execute("SELECT o.content, n.content FROM supersessions s JOIN chunks o ON o.id = s.old"
                                " JOIN chunks n ON n.id = s.new").fetchall())
    finally:
        con.close()


def test_the_places_of_a_move() -> None:
    assert move_places("Moved from Berlin to Lisbon on 2025-11-20.") == ("Berlin", "Lisbon")
    assert move_places("Shipped from Berlin to Lisbon on 2025-12-11.") == ("Berlin", "Lisbon")
    assert move_places("Relocated to Porto for the new job.") == (None, "Porto")
    assert move_places("Moved to Lisbon from Berlin.") == (None, "Lisbon")
    assert move_places("Moved the release notes to the wiki.") is None  # no named place


def test_a_move_to_the_place_memory_already_names_hides_nothing(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("memory", "2025-11-03", {".gitignore": ".memory/\n", "memory.md": "# Memory\n\n- @Peter lives in Berlin (Kreuzberg).\n"})
    repo.commit("memory: I live in Lisbon now", "2025-11-20",
                {"memory.md": "# Memory\n\n- @Peter lives in Lisbon (Alfama) and works from home most days.\n"})
    repo.commit("log", "2025-11-21", {"memory/2025-11-21.md": "# 2025-11-21\n\n## Retain\n"
                                      "- W @Peter: Moved from Berlin to Lisbon on 2025-11-20.\n"})
    update(Workspace(repo.path))
    assert superseded(repo.path) == {}
    with Session(Workspace(repo.path)) as s:
        answer = s.search("where does Peter live", Options(k=5)).results
    alfama = next(r for r in answer if "Alfama" in r.content)
    assert alfama.superseded_by is None and alfama.status != "superseded"


def test_a_move_still_replaces_the_home_it_left_and_a_plan_naming_the_new_one(tmp_path: Path) -> None:
    repo = history(
        tmp_path,
        ("2025-03-02", ("W @Ines: Lives in Porto, above a tile shop in Ribeira.",)),
        ("2025-04-10", ("W @Ines: Lives in Porto still; moving to Lisbon in May once the lease ends.",)),
        ("2025-05-20", ("W @Ines: Moved to Lisbon last week.",)),
        ("2025-06-01", ("W @Tomas: Lives in Faro.",)),
        ("2025-09-01", ("W @Tomas: Moved from Faro to Lisbon in August.",)))
    links = superseded(repo.path)
    assert links.get("@Ines: Lives in Porto still; moving to Lisbon in May once the lease ends.") == "@Ines: Moved to Lisbon last week."
    assert links.get("@Tomas: Lives in Faro.") == "@Tomas: Moved from Faro to Lisbon in August."
