"""currency.settle with `reach` (the top k of a hybrid question reads only the head): only the
candidates that can still reach the first `reach` places are dated, and those places are exactly
the ones dating every candidate gives. Real git repository, real index rows; the scores are set
by the test so that dating moves candidates across the cut."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo

from gitmem.index import store
from gitmem.index.indexer import update
from gitmem.recall import currency
from gitmem.recall.currency import RECENCY_TOP, Settled, settle
from gitmem.recall.rank import Candidate
from gitmem.recall.search import Options, Session, _one_each
from gitmem.workspace import Workspace

PLAIN = 80


def bullets(day: str, lines: list[str]) -> dict[str, str]:
    return {f"memory/{day}.md": f"# {day}\n\n## Retain\n" + "".join(f"- {b}\n" for b in lines)}


def test_settling_the_head_only_gives_the_same_head(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("init", "2025-11-01", {".gitignore": ".memory/\n"})
    plain = [f"W @Bob: Harbour walk note {i} with the dog." for i in range(PLAIN)]
    repo.commit("notes", "2025-11-26", bullets("2025-11-26", [
        *plain,
        "W @Bob: Currently in Marrakech (Nov 27–Dec 1, 2025) for a wedding.",
        "W @Bob: Currently in Lisbon (Nov 20–Nov 24, 2025) for a conference.",
    ]))
    ws = Workspace(repo.path)
    update(ws)
    with Session(ws, catch_up=False) as s:
        ids = [r[0] for r in s.conn.execute("SELECT id FROM chunks WHERE valid_to IS NULL ORDER BY id")]
        rows = store.tuples_by_id(s.conn, store.COLS_RANK, ids)

    def cands() -> list[Candidate]:
        """Plain notes scored 100, 99, ... 21; Marrakech (still on, as of Nov 29) at 30, below the
        60th place, where x ACTIVE_FACTOR lifts it to 45, into the head; Lisbon (over) at 99.5,
        where x PAST_FACTOR drops it to 49.75."""
        out = []
        for r in rows.values():
            text = r[store.CONTENT]
            if "Marrakech" in text:
                score = 30.0
            elif "Lisbon" in text:
                score = 99.5
            else:
                score = 100.0 - int(text.split("note ")[1].split()[0])
            out.append(Candidate(r, score))
        return sorted(out, key=lambda c: -(c.score or 0.0))

    reach = 2 * RECENCY_TOP
    full = settle(cands(), {}, {}, "2025-11-29", False)
    head = settle(cands(), {}, {}, "2025-11-29", False, reach)
    assert full.exact == len(full.cands) and head.exact == reach < len(head.cands)
    place = [(c.row[store.ID], c.score) for c in full.cands]
    assert [(c.row[store.ID], c.score) for c in head.cands[:reach]] == place[:reach]
    texts = [c.row[store.CONTENT] for c in head.cands[:reach]]
    marrakech = next(i for i, t in enumerate(texts) if "Marrakech" in t)
    # Tied with note 55 (100 - 55), after it: equal scores keep their given order.
    assert head.cands[marrakech].score == 45.0 and texts[marrakech - 1].endswith("note 55 with the dog.")
    assert not any("Lisbon" in t for t in texts[:50]) and any("Lisbon" in t for t in texts)
    assert full.past == head.past and len(head.past) == 1  # Lisbon's window is over
    # Below the cut nothing was dated: the lowest notes keep their scores, in their given order.
    assert [c.score for c in head.cands[-3:]] == [23.0, 22.0, 21.0]
    assert set(c.row[store.ID] for c in head.cands) == set(c.row[store.ID] for c in full.cands)


def test_the_top_k_reads_past_the_exact_places_only_through_a_full_settle(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("notes", "2025-11-26", bullets("2025-11-26", [f"Kayak trip number {i} on the lake." for i in range(40)]))
    ws = Workspace(repo.path)
    update(ws)
    with Session(ws, catch_up=False) as s:
        rows = list(store.tuples_by_id(s.conn, store.COLS_RANK, [r[0] for r in s.conn.execute("SELECT id FROM chunks")]).values())
    cands = [Candidate(r, 100.0 - n) for n, r in enumerate(rows)]
    # one_per_fact looks at 2k + 8 = 28 places for k=10: more than 20 exact ones is not enough.
    assert _one_each(Settled(cands, {}, frozenset(), 20), {}, Options(k=10))[0] is None
    kept, copies = _one_each(Settled(cands, {}, frozenset(), len(cands)), {}, Options(k=10))
    assert kept is not None and [c.row[store.ID] for c in kept] == [c.row[store.ID] for c in cands] and copies == {}


def test_a_lexical_recall_dates_every_candidate(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A lexical pool has flat scores: finding its head cost more than the dating it saved, so a
    lexical top k settles everything (no `reach`)."""
    ws = _harbour(tmp_path)
    reaches = _spy_settle(monkeypatch)
    with Session(ws) as s:
        assert len(s.search("harbour walk with the dog", Options(k=10)).results) == 10
    assert reaches == [None]


def test_hybrid_recall_answers_as_before_when_only_the_head_is_dated(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """End to end, through a hybrid recall (the real embedding model): the same answers whether
    settle dates the head or everything (reach off), and the head dated fewer candidates."""
    pytest.importorskip("onnxruntime", reason="semantic recall needs the embed extra (bash .ci/setup installs it)")
    from gitmem.recall import semantic

    ws = _harbour(tmp_path)
    assert semantic.fill_vectors(ws).left == 0
    embedder = semantic.load_embedder()

    def answers() -> list[tuple[str | None, bool, float | None, str]]:
        with Session(ws, dense=semantic.InProcess(embedder)) as s:
            return [(r.source, r.past, r.score, r.content) for r in
                    s.search("harbour hotel walk festival", Options(k=10, semantic=True)).results]

    dated: list[int] = []
    real = currency._date
    monkeypatch.setattr(currency, "_date", lambda c, day, past, stored: (dated.append(1), real(c, day, past, stored))[1])
    reaches = _spy_settle(monkeypatch)
    head = answers()
    n_head = len(dated)
    assert reaches and all(r is not None for r in reaches)  # the head path ran
    full_settle = currency.settle
    monkeypatch.setattr("gitmem.recall.search.settle", lambda *a, **kw: full_settle(*a[:5]))
    dated.clear()
    full = answers()
    assert full == head and len(head) == 10
    # The hotel stay was over long ago: dated, its score halved, and marked past.
    assert [c for _, past, _, c in head if past] == ["@Bob: Currently at the harbour hotel (Nov 10–Nov 20, 2025) for a walk festival."]
    assert n_head < len(dated)


def _harbour(tmp_path: Path) -> Workspace:
    repo = GitRepo.init(tmp_path / "ws")
    lines = [f"W @Bob: Harbour walk note {i} with the dog near the old harbour wall." for i in range(120)]
    repo.commit("notes", "2025-11-26", bullets("2025-11-26", lines))
    repo.commit("stays", "2025-11-27", bullets("2025-11-27", [
        "W @Bob: Currently walking the harbour route daily (Nov 20–Dec 9, 2025) while the dog heals.",
        "W @Bob: Currently at the harbour hotel (Nov 10–Nov 20, 2025) for a walk festival."]))
    ws = Workspace(repo.path)
    update(ws)
    return ws


def _spy_settle(monkeypatch) -> list[int | None]:  # type: ignore[no-untyped-def]
    """The `reach` of every settle a recall calls."""
    reaches: list[int | None] = []
    real = currency.settle

    def spy(*a, **kw):  # type: ignore[no-untyped-def]
        reaches.append(a[5] if len(a) > 5 else kw.get("reach"))
        return real(*a, **kw)

    monkeypatch.setattr("gitmem.recall.search.settle", spy)
    return reaches
