"""The dense search's large-index path on a real git history with the real bundled model: which
texts a question as of any time may find (VectorIndex._scope, from each text's own version span,
rebuilt per reload) and the texts the sign-bit pass hands to rescoring (VectorIndex._candidates,
whose distances are summed in two uint8 halves), each against the plain computation from the
chunk versions; through an edit, a line shared by two files, a deletion, `gitmem forget` and
`gitmem index --rebuild`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="semantic recall needs the embed extra (bash .ci/setup installs it)")
pytest.importorskip("onnxruntime", reason="semantic recall needs the embed extra (bash .ci/setup installs it)")

from gitmem import forget as fg  # noqa: E402
from gitmem.index import vectors  # noqa: E402
from gitmem.index.db import open_index  # noqa: E402
from gitmem.index.indexer import update  # noqa: E402
from gitmem.recall import semantic  # noqa: E402
from gitmem.workspace import Workspace  # noqa: E402
from gitrepo import GitRepo  # noqa: E402

TOPICS = ["rock climbing on weekends", "the quarterly tax report", "milk and flour from the corner shop",
          "the dentist moved to Thursday", "car insurance renewed", "a train to Lyon", "the garden shed roof",
          "Peter's birthday dinner", "a new laptop for work", "the piano lesson on Monday"]
SHARED = "Bring the blue umbrella to the station."
SECRET = "The alarm code is 4711."


def lines(day: int) -> list[str]:
    return [f"Day {day}: {t}, note {day * 7 % 11}." for t in TOPICS[day % 3:day % 3 + 6]]


def page(items: list[str]) -> str:
    return "# Log\n\n" + "\n\n".join(f"- {t}" for t in items) + "\n"


@pytest.fixture
def history(repo: GitRepo) -> Workspace:
    """Ten days of logs; day 4's file is edited on day 6 and deleted on day 9; the same line goes
    into two files (one text, two versions); a line of day 2 is forgotten later."""
    for day in range(1, 11):
        files: dict[str, str] = {f"memory/2025-11-{day:02d}.md": page(lines(day) + ([SECRET] if day == 2 else []))}
        if day in (3, 5):
            files[f"memory/shared-{day}.md"] = page([SHARED])
        if day == 6:
            files["memory/2025-11-04.md"] = page([*lines(4)[:3], "Day 4, edited: the shed roof leaks again."])
        repo.commit(f"day {day}", f"2025-11-{day:02d}", files)
        if day == 9:
            repo.remove("memory/2025-11-04.md")
            repo.commit("drop day 4", "2025-11-09")
    ws = Workspace(repo.path)
    update(ws)
    return ws


def fill(ws: Workspace) -> vectors.VectorIndex:
    filled = semantic.fill_vectors(ws)
    assert filled.left == 0
    conn, _ = open_index(ws)
    return vectors.VectorIndex(conn)


def asks(table: vectors.VectorIndex) -> list[tuple[int | None, bool, int | None, int | None]]:
    """Every position now and as of, with history, and with since / until windows."""
    last = int(table.valid_from.max())
    out: list[tuple[int | None, bool, int | None, int | None]] = [(None, False, None, None), (None, True, None, None)]
    for at in range(0, last + 2):
        out += [(at, False, None, None), (at, True, None, None), (None, False, at, None), (at, False, at // 2, at)]
    return out


def check_scopes(table: vectors.VectorIndex) -> int:
    """Each scope against the versions: a text is hidden exactly when no visible version with a
    vector uses it. Returns how many of the asks hid a text some version in the table uses."""
    table.refresh()
    hid_used = 0
    for at, history, since, until in asks(table):
        table.now = None  # "now" worked out again too
        sc = table._scope(at, history, since, until)
        vis = table.visible(at, history, since, until)
        has = vis & table.has_vec
        want = np.full(len(table.i8), vectors.HIDDEN, dtype=np.uint16)
        want[table.row_of[has]] = 0
        assert sc.hidden is not None and np.array_equal(sc.hidden, want), (at, history, since, until)
        assert (sc.visible, sc.found) == (int(vis.sum()), int(has.sum()))
        assert np.array_equal(sc.mask, has)
        hid_used += bool(((want > 0) & np.isin(np.arange(len(want)), table.row_of[table.has_vec])).any())
    return hid_used


def nearest_by_sign_bits(table: vectors.VectorIndex, q: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """The candidates as plainly as they can be said: each visible text's Hamming distance to the
    question over its 384 sign bits, the RESCORE_SHARE nearest (ties in row order), in row order."""
    signs = np.unpackbits(np.packbits(table.i8 > 0, axis=1), axis=1)
    dist = (signs != (q > 0)).sum(axis=1)
    visible = np.flatnonzero(hidden == 0)
    k = min(max(vectors.RESCORE_MIN, int(vectors.RESCORE_SHARE * len(visible))), len(visible))
    order = visible[np.lexsort((visible, dist[visible]))]
    return np.sort(order[:k])


def test_scopes_and_candidates_agree_with_the_versions(history: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "EXACT_TEXTS", 0)  # the sign-bit path at any size
    monkeypatch.setattr(vectors, "RESCORE_MIN", 4)
    monkeypatch.setattr(vectors, "HAMMING_BLOCK", 16)  # several blocks, the last one short
    embedder = semantic.load_embedder()
    table = fill(history)
    table.refresh()
    sp = table._text_spans()
    assert len(sp.shared) >= 1  # the umbrella line: one text, two versions
    assert check_scopes(table) > 0
    rng = np.random.default_rng(1)
    questions = [embedder.embed([t])[0] for t in ("where is the umbrella?", "tax deadline", "shed roof repair")]
    for q in [*questions, rng.standard_normal(vectors.DIM).astype(np.float32)]:
        for at, history_, since, until in asks(table)[::5]:
            sc = table._scope(at, history_, since, until)
            assert sc.hidden is not None
            got = table._candidates(q.astype(np.float32), sc)
            assert np.array_equal(got, nearest_by_sign_bits(table, q, sc.hidden)), (at, history_, since, until)

    # Rescoring every visible text, the fast path is the exact search: the cosine of each visible
    # version's text, best first, equal scores (versions sharing a text) in table order.
    monkeypatch.setattr(vectors, "RESCORE_SHARE", 1.0)
    cosine = table.i8.astype(np.float32) * table.scales[:, None]
    for q in questions:
        for at, history_, since, until in asks(table)[::3]:
            pos = np.flatnonzero(table.visible(at, history_, since, until) & table.has_vec)
            scores = cosine[table.row_of[pos]] @ q
            want = table.chunk_ids[pos[np.lexsort((pos, -scores))][:12]].tolist()
            assert table.search(q, 12, at, history_, since, until).ids == want, (at, history_, since, until)
    umbrella = table.search(questions[0], 2).ids
    assert [r[0] for r in table.conn.execute(f"SELECT content FROM chunks WHERE id IN ({umbrella[0]}, {umbrella[1]})")] == [SHARED] * 2

    # A forget rewrites history and rebuilds the index; `index --rebuild` replaces it: each table
    # read afresh agrees with its versions again.
    table.conn.close()
    fg.forget(history, fg.target_for(history, "alarm code is 4711", None), dry_run=False)
    forgotten = fill(history)
    assert not forgotten.conn.execute("SELECT 1 FROM chunks WHERE content LIKE '%4711%'").fetchall()
    assert check_scopes(forgotten) > 0
    forgotten.conn.close()
    update(history, rebuild=True)
    rebuilt = fill(history)
    assert check_scopes(rebuilt) > 0
    rebuilt.conn.close()


def test_a_text_no_version_uses_is_never_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored text whose versions are all gone (its link deleted) stays out of every scope."""
    from gitmem.index import migrations

    monkeypatch.setattr(vectors, "EXACT_TEXTS", 0)
    conn = sqlite3.connect(tmp_path / "v.sqlite", isolation_level=None)
    migrations.apply(conn)
    rng = np.random.default_rng(2)
    vecs = rng.standard_normal((6, vectors.DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO chunks (id, path, start_line, end_line, heading, kind, fact, entities, content, ident,"
                     " valid_from, valid_to) VALUES (?, 'm.md', 1, 1, '', 'note', 0, '', ?, 0, ?, ?)",
                     [(i, f"t{i}", 1, None) for i in range(1, 6)])
    conn.executemany("INSERT INTO texts (id, digest, vec) VALUES (?, ?, ?)", [(i, str(i), vectors.pack(v)) for i, v in
                                                                               zip(range(1, 7), vecs)])
    conn.executemany("INSERT INTO chunk_vectors VALUES (?, ?)", [(i, i) for i in range(1, 6)])  # text 6: no version
    conn.execute("COMMIT")
    table = vectors.VectorIndex(conn)
    table.refresh()
    for at, history, since, until in [(None, False, None, None), (None, True, None, None), (3, True, None, None),
                                      (3, False, None, None), (None, False, 0, None)]:
        sc = table._scope(at, history, since, until)
        assert sc.hidden is not None and sc.hidden[5] == vectors.HIDDEN and not sc.hidden[:5].any()
    assert 6 not in vectors.VectorIndex(conn).search(vecs[5], 6).ids
    # No version linked to any text (their links all gone): every text hidden, nothing found.
    other = sqlite3.connect(tmp_path / "v.sqlite", isolation_level=None)  # another connection: the table reloads
    other.execute("DELETE FROM chunk_vectors")
    other.close()
    table.refresh()
    sc = table._scope(3, False, None, None)
    assert sc.hidden is not None and (sc.hidden == vectors.HIDDEN).all() and (sc.found, sc.visible) == (0, 5)
    assert table.search(vecs[0], 3) == vectors.Hits([], [], 5, 5)
