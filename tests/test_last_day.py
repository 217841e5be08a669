"""The last day of a statement that holds for a while only is read once, when its chunk version is
indexed (`chunks.last_day`, gitmem/index/dating.py), and recall compares it with the day asked
about instead of reading every candidate's text again (wave 13: the lexical p95 at 1M lines). The
stored day is the chunk version's own (an edit is a new version with its own day: `--as-of` stays
exact), an index built before the column reads the text until `gitmem index` derives the days with
the links (index/rules.py "4"), and a rule turned off is read at recall. Real git repositories,
real index, real recall."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_attribute_recency import ask, log
from test_current_truth_wave7 import history

from gitmem.index import rules, store
from gitmem.index.dating import last_day
from gitmem.index.indexer import update
from gitmem.index.store import COLS_ALL, LAST_DAY
from gitmem.recall import currency, search
from gitmem.recall.rank import Candidate
from gitmem.recall.result import Result
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace

TRIP = "@Bob: Currently in Marrakech (Nov 27–Dec 1, 2025) for a wedding."
SABBATICAL = "@Bob: On sabbatical through March."
HOME = "@Bob: Lives in Lyon with his partner."


def _stored(ws: Workspace) -> dict[str, str | None]:
    """Each chunk version's content -> its stored last day."""
    con = sqlite3.connect(ws.index_path)
    try:
        return {c: d for c, d in con.execute("SELECT content, last_day FROM chunks")}
    finally:
        con.close()


def _sql(ws: Workspace, *statements: str) -> None:
    con = sqlite3.connect(ws.index_path)
    try:
        for s in statements:
            con.execute(s)
        con.commit()
    finally:
        con.close()


def _bob(tmp_path: Path) -> Workspace:
    return Workspace(history(tmp_path, ("2025-11-02", ("W " + HOME,)), ("2025-11-26", ("W " + TRIP, "W " + SABBATICAL))).path)


def _trip(results: list[Result]) -> Result:
    return next(r for r in results if "Marrakech" in str(r.content))


def test_the_index_stores_each_chunks_last_day_as_recall_reads_it(tmp_path: Path) -> None:
    ws = _bob(tmp_path)
    stored = _stored(ws)
    assert stored[TRIP] == "2025-12-01"  # the written window's end
    assert stored[SABBATICAL] == "2026-03-31"  # an end named alone, read from the log's day
    assert stored[HOME] == ""  # read: no end
    # The same reading recall makes of the text (one owner: index/dating.py), for every row.
    con = sqlite3.connect(ws.index_path)
    try:
        rows = con.execute(f"SELECT {COLS_ALL} FROM chunks c").fetchall()
    finally:
        con.close()
    assert rows and all(r[LAST_DAY] == (last_day(r) or "") for r in rows)


def test_recall_dates_candidates_by_the_stored_day(tmp_path: Path) -> None:
    ws = _bob(tmp_path)
    repo = GitRepo(ws.root)
    assert _trip(ask(repo, "where is Bob Marrakech", as_of="2025-11-29")).past is False
    assert _trip(ask(repo, "where is Bob Marrakech", as_of="2025-12-10")).past is True
    # Recall reads the column, not the text: a stored day (tampered here) decides.
    _sql(ws, "UPDATE chunks SET last_day = '2025-11-28' WHERE content LIKE '%Marrakech%'")
    assert _trip(ask(repo, "where is Bob Marrakech", as_of="2025-11-29")).past is True
    # With a rule turned off (an ablation) the text is read at recall, as before the column.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(currency, "OPEN_EXPIRY", False)
        assert _trip(ask(repo, "where is Bob Marrakech", as_of="2025-11-29")).past is False


def test_an_index_from_before_the_column_reads_the_text_until_derived_again(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """An index built before migration 0005 (no column; links by rules "3") gets the column on its
    next open, its rows without a day (NULL), and answers exactly from the text as long as it is
    not derived again (too large for recall to do it: `gitmem index` will); its next update stores
    every day."""
    ws = _bob(tmp_path)
    repo = GitRepo(ws.root)
    monkeypatch.setattr(search, "REDERIVE_IN_RECALL", 0)
    _sql(ws, "ALTER TABLE chunks DROP COLUMN last_day", "DELETE FROM _migrations WHERE name = '0005_last_day'",
         f"UPDATE meta SET value = '3' WHERE key = '{rules.DERIVED_RULES}'")
    with Session(ws) as s:
        answer = s.search("where is Bob Marrakech", Options(as_of="2025-12-10"))
    assert search.STALE_RULES in answer.notes and _trip(answer.results).past is True
    assert "Lyon" in str(ask(repo, "where is Bob", as_of="2025-12-10")[0].content)
    # A stale index's stored days are not read, even where a row has one (an older gitmem's reading).
    _sql(ws, "UPDATE chunks SET last_day = '2025-11-28' WHERE content LIKE '%Marrakech%'")
    assert _trip(ask(repo, "where is Bob Marrakech", as_of="2025-11-29")).past is False
    assert _stored(ws)[HOME] is None  # recall did not derive them
    result = update(ws)
    assert any("derived the supersession links again" in n for n in result.notes)
    assert _stored(ws) == {HOME: "", TRIP: "2025-12-01", SABBATICAL: "2026-03-31"}
    assert _trip(ask(repo, "where is Bob Marrakech", as_of="2025-11-29")).past is False


def test_a_row_without_a_stored_day_is_read_from_its_text(tmp_path: Path) -> None:
    """A row an older gitmem indexed into a current index (no column in its INSERT) is read from
    its text: NULL is "not read", never "no end"."""
    ws = _bob(tmp_path)
    _sql(ws, "UPDATE chunks SET last_day = NULL WHERE content LIKE '%Marrakech%'")
    assert _trip(ask(GitRepo(ws.root), "where is Bob Marrakech", as_of="2025-12-10")).past is True


def test_an_edited_window_keeps_each_versions_own_day_as_of_any_point(tmp_path: Path) -> None:
    """The stored day belongs to a chunk version: as of a day before an edit that shortened the
    window, the version then in memory answers with its own (later) end, and the edited version's
    day does not leak into it."""
    repo = GitRepo.init(tmp_path / "ws")
    long = "@Ana: Currently in Lisbon (Mar 1–Apr 30, 2026) for a residency."
    short = "@Ana: Currently in Lisbon (Mar 1–Mar 12, 2026) for a residency."
    files = log("2026-03-01", "W @Ana: Lives in Ghent.", "W " + long)
    files[".gitignore"] = ".memory/\n"
    repo.commit("log", "2026-03-01", files)
    repo.commit("edit", "2026-03-10", log("2026-03-01", "W @Ana: Lives in Ghent.", "W " + short))
    update(Workspace(repo.path))
    assert _stored(Workspace(repo.path)) == {"@Ana: Lives in Ghent.": "", long: "2026-04-30", short: "2026-03-12"}
    before = ask(repo, "where is Ana Lisbon", as_of="2026-03-05")
    lisbon = next(r for r in before if "Lisbon" in str(r.content))
    assert lisbon.content == long and lisbon.past is False
    # After the edit, as of a day between the two ends: both versions, each dated by its own day.
    both = ask(repo, "where is Ana Lisbon", as_of="2026-03-20", include_history=True)
    got = {str(r.content): r.past for r in both if "Lisbon" in str(r.content)}
    assert got == {long: False, short: True}


def test_newer_first_reads_whether_a_statement_holds_for_a_while_from_the_stored_day(tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`newer_first`'s reading of a candidate (`_said`) asks whether it holds for a while only
    ("currently ...", a named end, a window still to come): where the index's rules are this code's,
    the stored day answers it as the text does, and a session passes that on (wave 14)."""
    ws = _bob(tmp_path)
    con = sqlite3.connect(ws.index_path)
    try:
        ids = [i for (i,) in con.execute("SELECT id FROM chunks")]
        rows = list(store.tuples_by_id(con, store.COLS_RANK, ids).values())
    finally:
        con.close()
    q = currency.Asked({"where", "bob"}, families=frozenset({"residence"}), entities=frozenset({"bob"}))

    def for_now(row: tuple[object, ...], stored: bool) -> bool:
        return currency.said_of(Candidate(row, 1.0), q, set(), stored).for_now

    by_text = {r[store.CONTENT]: r for r in rows}
    assert {c: for_now(r, True) for c, r in by_text.items()} == {TRIP: True, SABBATICAL: True, HOME: False}
    assert all(for_now(r, True) == for_now(r, False) for r in rows)  # the same reading
    # The column decides where it is read (tampered days), the text where it is not.
    no_end = (*by_text[SABBATICAL][:LAST_DAY], "", *by_text[SABBATICAL][LAST_DAY + 1:])
    an_end = (*by_text[HOME][:LAST_DAY], "2026-01-31", *by_text[HOME][LAST_DAY + 1:])
    assert (for_now(no_end, True), for_now(no_end, False)) == (False, True)
    assert (for_now(an_end, True), for_now(an_end, False)) == (True, False)
    # A session on a current index hands the column to newer_first.
    seen: list[bool] = []
    real = currency._said

    def spy(c: Candidate, q: currency.Asked, past: set[int], stored: bool = False, known: object = None) -> object:
        seen.append(stored)
        return real(c, q, past, stored, known)  # type: ignore[arg-type]

    monkeypatch.setattr(currency, "_said", spy)
    answer = ask(GitRepo(ws.root), "where does Bob live now", as_of="2025-12-10")
    assert "Lyon" in str(answer[0].content)
    assert seen and all(seen)
