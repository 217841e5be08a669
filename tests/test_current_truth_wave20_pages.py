"""Issue 13, wave 20: (b) a stay with a named end still running is where someone is ("Visiting his
parents in Karaikudi until 12 January", written on 20 December, was dated 12 January of the log's
year and so read as older than the home: the home ranked first); once over, the home is first again.
(c) a bank page outside gitmem's layout whose heading names its file ("# Kazue" on
bank/people/kazue.md): its lines name no one, so they were nobody's and "What is Kazue's address?"
put another person's address first. Now such a line is the page's entity's (parse.entities
`page_entity`), also in an index derived by older rules (`indexer.rederive`, RULES "9").
Real git repositories with pinned dates, real index, lexical recall; the sentences are no bench set's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gitrepo import GitRepo
from test_attribute_recency import ask, log
from test_current_truth_wave7 import history

from gitmem.index import rules
from gitmem.index.db import set_meta
from gitmem.index.indexer import update
from gitmem.workspace import Workspace


def test_a_stay_until_a_day_after_new_year_is_where_someone_is_until_then(tmp_path: Path) -> None:
    repo = history(tmp_path,
                   ("2025-12-01", ("W @Bertil: Lives in Umea and runs a bicycle shop on Storgatan.",)),
                   ("2025-12-19", ("W @Bertil: Visiting his sister in Malmo until 10 January.",)))
    during = [str(r.content) for r in ask(repo, "Where is Bertil?", k=5, as_of="2026-01-03") if "bertil" in r.entities]
    assert "Visiting his sister in Malmo" in during[0], during
    assert any("Lives in Umea" in s for s in during[1:]), during
    after = [str(r.content) for r in ask(repo, "Where is Bertil?", k=5, as_of="2026-02-01") if "bertil" in r.entities]
    assert "Lives in Umea" in after[0], after
    assert any("Visiting his sister" in s for s in after[1:]), after


def test_which_pages_headings_name_their_lines_entity() -> None:
    from gitmem.layout import bank_folder_stem
    from gitmem.parse.entities import page_entity

    assert bank_folder_stem("bank/people/kazue.md") == "kazue"
    assert bank_folder_stem("bank/entities/Peter.md") == "Peter"
    # A page at bank/'s top is a page of many things; a proposal is no page of anyone.
    assert bank_folder_stem("bank/world.md") is None
    assert bank_folder_stem("bank/proposals/memory.md") is None
    assert bank_folder_stem("memory/2025-01-02.md") is None
    assert page_entity("kazue", "Kazue") == "kazue"
    assert page_entity("anne-marie", "Anne Marie") == "anne-marie"
    assert page_entity("notes", "notes") is None  # no name
    assert page_entity("kazue", "Taro") is None  # the heading names someone else than the file


PAGE_V1 = "# Wilhelmina\n\n- Address: 14 Hilltop Road, Frome.\n- Works as a potter at the Frome craft co-op.\n"
PAGE_V2 = "# Wilhelmina\n\n- Address: 3 Mill Lane, Bruton, since October.\n- Works as a potter at the Frome craft co-op.\n"


def _page_history(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "ws")
    files = log("2025-03-02", "W @Ottoline: Her new address is 9 Quarry Close, Shepton Mallet.")
    files[".gitignore"] = ".memory/\n"
    files["bank/people/wilhelmina.md"] = PAGE_V1
    repo.commit("log", "2025-03-02", files)
    repo.commit("page", "2025-10-14", {"bank/people/wilhelmina.md": PAGE_V2})
    repo.commit("log", "2025-11-20", log("2025-11-20", "W @Ottoline: Changed her address to 22 Station Road, Wells."))
    return repo


def test_a_line_of_a_page_whose_heading_names_it_answers_for_that_entity(tmp_path: Path) -> None:
    repo = _page_history(tmp_path)
    update(Workspace(repo.path))
    results = ask(repo, "What is Wilhelmina's address?", k=5, as_of="2025-12-01")
    assert "3 Mill Lane" in str(results[0].content), [r.content for r in results]
    assert "wilhelmina" in results[0].entities
    assert not any("14 Hilltop Road" in str(r.content) for r in results[:1])


def test_an_index_derived_by_older_rules_gives_the_pages_lines_their_entity(tmp_path: Path) -> None:
    repo = _page_history(tmp_path)
    ws = Workspace(repo.path)
    update(ws)
    db = repo.path / ".memory" / "index.sqlite"
    # As an older gitmem left it: the page's lines name no one, derived by rules "8".
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, content, heading, path, entities FROM chunks WHERE path LIKE 'bank/%'").fetchall()
        for i, content, heading, path, ents in rows:
            conn.execute("INSERT INTO chunks_fts (chunks_fts, rowid, content, heading, path, entities) VALUES ('delete',?,?,?,?,?)",
                         (i, content, heading, path, ents))
            conn.execute("INSERT INTO chunks_fts (rowid, content, heading, path, entities) VALUES (?,?,?,?,'')", (i, content, heading, path))
        conn.execute("UPDATE chunks SET entities = '' WHERE path LIKE 'bank/%'")
        conn.execute("DELETE FROM chunk_entities WHERE chunk_id IN (SELECT id FROM chunks WHERE path LIKE 'bank/%')")
        set_meta(conn, rules.DERIVED_RULES, "8")
    update(ws)  # `gitmem index`: the rules changed, so the stored chunks are derived again
    with sqlite3.connect(db) as conn:
        got = conn.execute("SELECT DISTINCT c.entities FROM chunks c WHERE c.path LIKE 'bank/%'").fetchall()
        assert got == [("wilhelmina",)]
        assert conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'entities:wilhelmina'").fetchone()[0] == 3
    results = ask(repo, "What is Wilhelmina's address?", k=5, as_of="2025-12-01")
    assert "3 Mill Lane" in str(results[0].content), [r.content for r in results]


def test_a_move_told_with_the_season_it_happened_in_does_not_expire(tmp_path: Path) -> None:
    # "over the summer" says when the move happened: read as a while, the move was "past" after
    # August, and the home on the person's bank page came back first once its lines were hers.
    repo = GitRepo.init(tmp_path / "ws")
    page = "# Gudrun\n\n- Lives in Bergen, near the fish market.\n"
    repo.commit("page", "2025-02-01", {".gitignore": ".memory/\n", "bank/people/gudrun.md": page})
    repo.commit("log", "2025-08-25", log("2025-08-25", "W @Gudrun: Moved to Alesund over the summer, keeps the kayak at the harbour there now."))
    update(Workspace(repo.path))
    with sqlite3.connect(repo.path / ".memory" / "index.sqlite") as conn:
        assert conn.execute("SELECT last_day FROM chunks WHERE content LIKE '%Moved to Alesund%'").fetchone() == ("",)
    shown = [str(r.content) for r in ask(repo, "Where does Gudrun live?", k=5, as_of="2025-10-01") if "gudrun" in r.entities]
    assert "Moved to Alesund" in shown[0], shown
    assert any("Lives in Bergen" in s for s in shown[1:]), shown


def test_a_livelihood_is_no_home_a_move_leaves_it_current(tmp_path: Path) -> None:
    # "for a living" was read as the residence family: the move to Kristiansand marked "Repairs
    # violins for a living" superseded with the home (RULES "10": attributes.livelihood_only).
    repo = history(tmp_path,
                   ("2025-01-14", ("W @Torvald: Lives in Siauliai, in a wooden house near the river.",
                                   "W @Torvald: Repairs violins for a living; most of his customers are students.")),
                   ("2025-09-02", ("W @Torvald: Moved to Kristiansand last week; renting a flat near the harbour.",)))
    work = [r for r in ask(repo, "What does Torvald do for a living?", k=5, as_of="2025-11-10") if "torvald" in r.entities]
    job = next(r for r in work if "Repairs violins" in str(r.content))
    assert job.superseded_by is None, job
    assert "Siauliai" not in " ".join(str(r.content) for r in work)  # the old home is still replaced
    home = [str(r.content) for r in ask(repo, "Where does Torvald live?", k=5, as_of="2025-11-10") if "torvald" in r.entities]
    assert "Moved to Kristiansand" in home[0], home
    from gitmem.parse.attributes import livelihood_only, said

    assert livelihood_only("@Torvald: Repairs violins for a living.") and "residence" not in said("@Torvald: Repairs violins for a living.")
    assert not livelihood_only("@Bo: Makes a decent living and is living in Oslo.")
    assert "residence" in said("@Ana: Living in Porto now.")
