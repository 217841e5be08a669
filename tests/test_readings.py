"""What recall's recency rules read of a statement whatever is asked is read once, when its chunk
version is indexed (table `readings`, gitmem/index/readings.py), and `newer_first` reads 30 stored
rows per question instead of parsing 30 texts (wave 19: the p95 at 1M lines). The stored readings
are each chunk version's own (an edit is a new version with its own: `--as-of` stays exact), made
by the one function recall uses for a row without them (`readings.derive`), renewed when the rules'
version changes (index/rules.py "8"), rebuilt by `gitmem index --rebuild` and by a forget. Real git
repositories, real index, real recall."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_attribute_recency import ask, log, top_about
from test_last_day import _sql

from gitmem import forget as fg
from gitmem.index import rules
from gitmem.index.indexer import update
from gitmem.index.readings import Reading, derive, unpack
from gitmem.index.store import COLS_ALL
from gitmem.recall import search
from gitmem.workspace import Workspace

OSAKA = "@Yuki stays in Osaka with her parents."
PLAN = "@Yuki: Plans to get her own apartment in Kyoto."
KYOTO = "@Yuki: Has her own apartment in Kyoto since June."
OTHERS = ("@Yuki: Dreamt she'd moved back to Osaka.", "@Yuki: Her daughter lives in Bristol.",
          "@Yuki: @Ken opened a studio in Kobe.", "@Yuki: Sang a solo at the spring concert.",
          "@Yuki: Gave up the gym membership.", "@Yuki: Lived in Prague back in 2019.",
          "@Yuki: Her mother thinks she is moving to Nara.", "Rain all day; the trains were late.")


def _history(tmp_path: Path) -> GitRepo:
    """Osaka in memory.md; a plan for Kyoto (and lines of every reading) logged on 2025-06-11; the
    plan's line edited into a home on 2025-07-01."""
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("core", "2025-05-01", {".gitignore": ".memory/\n", "memory.md": f"# Memory\n\n## Yuki\n- {OSAKA}\n"})
    repo.commit("plan", "2025-06-11", log("2025-06-11", "W " + PLAN, *("W " + o for o in OTHERS)))
    repo.commit("edit", "2025-07-01", log("2025-06-11", "W " + KYOTO, *("W " + o for o in OTHERS)))
    update(Workspace(repo.path))
    return repo


def _stored(ws: Workspace) -> dict[str, Reading]:
    """Each chunk version's content -> its stored readings; asserts every version has them, as
    recall would read them from its text."""
    con = sqlite3.connect(ws.index_path)
    try:
        rows = con.execute(f"SELECT {COLS_ALL} FROM chunks c").fetchall()
        kept = {r[0]: unpack(r[1:]) for r in con.execute("SELECT chunk_id, subject, relation, attrs, words, flags FROM readings")}
    finally:
        con.close()
    assert rows and sorted(kept) == sorted(r[0] for r in rows)
    for r in rows:
        assert kept[r[0]] == derive(r), r[11]
    return {r[11]: kept[r[0]] for r in rows}


def test_each_chunk_version_stores_its_readings_as_recall_reads_them(tmp_path: Path) -> None:
    ws = Workspace(_history(tmp_path).path)
    stored = _stored(ws)
    # Each version its own: the plan intends, the home it became does not (and says where she lives).
    assert stored[PLAN].intends and not stored[KYOTO].intends
    assert "residence" in stored[KYOTO].attrs and not stored[KYOTO].told
    dream, daughter, ken, solo, gym, prague, hearsay, rain = (stored[o] for o in OTHERS)
    assert dream.no_value and hearsay.reported and solo.event and gym.ending and prague.told
    assert (daughter.subject, daughter.relation) == ("", "yuki's daughter") and ken.subject == "ken"
    assert stored[OSAKA].subject is None and "osaka" in stored[OSAKA].words
    assert rain == Reading(None, None, frozenset(), frozenset(), False, False, False, False, False, False)


def test_recall_reads_the_stored_readings_as_of_any_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _history(tmp_path)
    ws = Workspace(repo.path)
    # As of the plan, Osaka stays first (a plan moves ahead of nothing); after the edit, Kyoto.
    assert "Osaka" in top_about(ask(repo, "Where does Yuki stay?", as_of="2025-06-20"), "yuki")
    assert "Kyoto" in top_about(ask(repo, "Where does Yuki stay?"), "yuki")
    # The stored row decides, not the text: the home's readings tampered into a plan's.
    _sql(ws, f"UPDATE readings SET flags = flags | 1 WHERE chunk_id = (SELECT id FROM chunks WHERE content = '{KYOTO}')")
    assert "Osaka" in top_about(ask(repo, "Where does Yuki stay?"), "yuki")
    # An index derived by older rules is not read (until `gitmem index` derives it again): the text is.
    monkeypatch.setattr(search, "REDERIVE_IN_RECALL", 0)
    _sql(ws, f"UPDATE meta SET value = '7' WHERE key = '{rules.DERIVED_RULES}'")
    assert "Kyoto" in top_about(ask(repo, "Where does Yuki stay?"), "yuki")
    # A row without stored readings is read from its text.
    _sql(ws, f"UPDATE meta SET value = '{rules.RULES}' WHERE key = '{rules.DERIVED_RULES}'", "DELETE FROM readings")
    assert "Kyoto" in top_about(ask(repo, "Where does Yuki stay?"), "yuki")
    assert "Osaka" in top_about(ask(repo, "Where does Yuki stay?", as_of="2025-06-20"), "yuki")


def test_a_rules_change_derives_the_readings_again(tmp_path: Path) -> None:
    """Readings made by older rules (scrambled here) are all made again by the next update once the
    index's rules version differs, as the supersession links are; not while it is this code's."""
    ws = Workspace(_history(tmp_path).path)
    before = _stored(ws)
    _sql(ws, "UPDATE readings SET flags = 0, words = '', subject = NULL")
    update(ws)
    with pytest.raises(AssertionError):
        _stored(ws)  # the same rules: nothing derived again
    _sql(ws, f"UPDATE meta SET value = '7' WHERE key = '{rules.DERIVED_RULES}'")
    result = update(ws)
    assert any("derived the supersession links again" in n for n in result.notes)
    assert _stored(ws) == before


def test_rebuild_and_forget_keep_the_readings_exact(tmp_path: Path) -> None:
    repo = _history(tmp_path)
    ws = Workspace(repo.path)
    before = _stored(ws)
    update(ws, rebuild=True)
    assert _stored(ws) == before
    report = fg.forget(ws, fg.target_for(ws, "Sang a solo at the spring concert", None), dry_run=False)
    assert report.status == "forgotten"
    update(ws)
    after = _stored(ws)  # every version left has its readings, as its text reads; none of the forgotten line
    assert OTHERS[3] not in after and {k: v for k, v in before.items() if k != OTHERS[3]} == after
    assert "Kyoto" in top_about(ask(repo, "Where does Yuki stay?"), "yuki")
