"""The dense search's large-index path (gitmem/index/vectors.py: sign-bit pass, then int8
rescoring), on a real SQLite index with the real schema, made small by lowering its thresholds.

What must hold: the fast path finds what the exact one finds; a chunk version is returned only
while it is in memory at the time asked (`--as-of` stays exact on this path too, including a text
that only a hidden version uses); what is worked out once for "now" follows the index's changes.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="semantic recall needs the embed extra (bash .ci/setup installs it)")

from gitmem.index import migrations, vectors  # noqa: E402

N = 600
DAYS = 30


def unit(m: np.ndarray) -> np.ndarray:
    out: np.ndarray = m / np.linalg.norm(m, axis=-1, keepdims=True)
    return out


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> vectors.VectorIndex:
    """N chunk versions, one text each; version i is in memory from position i % DAYS + 1, and
    every third one is replaced 5 positions later."""
    monkeypatch.setattr(vectors, "EXACT_TEXTS", 0)  # the sign-bit path at any size
    monkeypatch.setattr(vectors, "RESCORE_MIN", 8)
    monkeypatch.setattr(vectors, "HAMMING_BLOCK", 64)  # several blocks, the last one short
    monkeypatch.setattr(vectors, "RESCORE_BLOCK", 16)
    conn = sqlite3.connect(tmp_path / "v.sqlite", isolation_level=None)
    migrations.apply(conn)
    vecs = unit(np.random.default_rng(3).standard_normal((N, vectors.DIM)).astype(np.float32))
    add(conn, range(1, N + 1), vecs)
    return vectors.VectorIndex(conn)


def span(i: int) -> tuple[int, int | None]:
    start = i % DAYS + 1
    return start, (start + 5 if i % 3 == 0 else None)


def add(conn: sqlite3.Connection, ids: range, vecs: np.ndarray) -> None:
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO chunks (id, path, start_line, end_line, heading, kind, fact, entities, content, ident,"
                     " valid_from, valid_to) VALUES (?, 'm.md', 1, 1, '', 'note', 0, '', ?, 0, ?, ?)",
                     [(i, f"text {i}", *span(i)) for i in ids])
    conn.executemany("INSERT INTO texts (id, digest, vec) VALUES (?, ?, ?)",
                     [(i, str(i), vectors.pack(v)) for i, v in zip(ids, vecs)])
    conn.executemany("INSERT INTO chunk_vectors VALUES (?, ?)", [(i, i) for i in ids])
    conn.execute("COMMIT")


def visible_at(i: int, at: int | None) -> bool:
    start, end = span(i)
    if at is None:
        return end is None
    return start <= at and (end is None or end > at)


def exact(table: vectors.VectorIndex, q: np.ndarray, n: int, at: int | None) -> list[int]:
    """The true ranking: float32 cosine over the visible versions."""
    rows = dict(table.conn.execute("SELECT t.id, t.vec FROM texts t").fetchall())
    ids = [i for i in range(1, N + 1) if visible_at(i, at) and i in rows]
    i8, scales = vectors.unpack([rows[i] for i in ids])
    scores = (i8.astype(np.float32) * scales[:, None]) @ q
    return [ids[j] for j in np.argsort(-scores, kind="stable")[:n]]


def test_fast_path_finds_what_the_exact_search_finds(table: vectors.VectorIndex,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    targets = [7, 100, 599]  # in memory now (not multiples of 3)
    for t in targets:
        stored, _ = vectors.unpack([table.conn.execute("SELECT vec FROM texts WHERE id = ?", (t,)).fetchone()[0]])
        q = unit(stored[0].astype(np.float32) + 0.02 * rng.standard_normal(vectors.DIM).astype(np.float32))
        hits = table.search(q, 5)
        assert hits.ids[0] == t  # a near-copy of a stored vector is found first
        assert hits.visible == sum(visible_at(i, None) for i in range(1, N + 1)) and hits.missing == 0
    # Rescoring every visible text, the fast path is the exact search, order and all.
    monkeypatch.setattr(vectors, "RESCORE_SHARE", 1.0)
    for _ in range(5):
        q = unit(rng.standard_normal(vectors.DIM).astype(np.float32))
        assert table.search(q, 20).ids == exact(table, q, 20, None)
        assert table.search(q, 20, at=12).ids == exact(table, q, 20, 12)


def test_as_of_is_exact_on_the_fast_path(table: vectors.VectorIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    # The question is the vector of version 3, which was replaced at position 9: as of 6 it is the
    # best hit; as of 10 and now it must not appear at all (its text is used by no visible version).
    stored, scales = vectors.unpack([table.conn.execute("SELECT vec FROM texts WHERE id = 3").fetchone()[0]])
    q = unit(stored[0].astype(np.float32) * scales[0])
    assert table.search(q, 5, at=6).ids[0] == 3
    for at in (10, None):
        hits = table.search(q, N, at=at)
        assert 3 not in hits.ids
        assert hits.ids and all(visible_at(i, at) for i in hits.ids)
        # Only the rescored candidates get a score: RESCORE_SHARE of the visible texts (one per version here).
        assert len(hits.ids) == max(vectors.RESCORE_MIN, int(vectors.RESCORE_SHARE * hits.visible))
    monkeypatch.setattr(vectors, "RESCORE_SHARE", 1.0)
    early = table.search(q, N, at=2)  # asked for more than is in memory: all of it, nothing else
    assert sorted(early.ids) == [i for i in range(1, N + 1) if visible_at(i, 2)]


def test_now_follows_the_index(table: vectors.VectorIndex) -> None:
    rng = np.random.default_rng(9)
    q = unit(rng.standard_normal(vectors.DIM).astype(np.float32))
    before = table.search(q, 3)
    assert N + 1 not in before.ids
    # Another connection commits a new version whose vector is the question itself.
    other = sqlite3.connect(table.conn.execute("PRAGMA database_list").fetchone()[2], isolation_level=None)
    add(other, range(N + 1, N + 2), q[None, :])
    other.close()
    after = table.search(q, 3)
    assert after.ids[0] == N + 1
    assert after.visible == before.visible + 1


def test_versions_that_share_a_text_are_each_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Versions of one text share its vector and its score: the n best are counted in versions, not
    texts, equal scores come in table order, and a version out of memory is never one of them
    although its text (used by a visible version) is a candidate."""
    monkeypatch.setattr(vectors, "EXACT_TEXTS", 0)
    monkeypatch.setattr(vectors, "RESCORE_MIN", 8)
    monkeypatch.setattr(vectors, "HAMMING_BLOCK", 64)
    conn = sqlite3.connect(tmp_path / "v.sqlite", isolation_level=None)
    migrations.apply(conn)
    texts = N // 3
    vecs = unit(np.random.default_rng(4).standard_normal((texts, vectors.DIM)).astype(np.float32))
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO chunks (id, path, start_line, end_line, heading, kind, fact, entities, content, ident,"
                     " valid_from, valid_to) VALUES (?, 'm.md', 1, 1, '', 'note', 0, '', ?, 0, ?, ?)",
                     [(i, f"text {(i - 1) % texts + 1}", *span(i)) for i in range(1, N + 1)])
    conn.executemany("INSERT INTO texts (id, digest, vec) VALUES (?, ?, ?)",
                     [(t, str(t), vectors.pack(v)) for t, v in zip(range(1, texts + 1), vecs)])
    conn.executemany("INSERT INTO chunk_vectors VALUES (?, ?)", [(i, (i - 1) % texts + 1) for i in range(1, N + 1)])
    conn.execute("COMMIT")
    table = vectors.VectorIndex(conn)
    i8, scales = vectors.unpack([v for (v,) in conn.execute("SELECT vec FROM texts ORDER BY id")])
    cosine = (i8.astype(np.float32) * scales[:, None])

    def truth(q: np.ndarray, n: int, at: int | None) -> list[int]:
        ids = [i for i in range(1, N + 1) if visible_at(i, at)]
        scores = cosine[[(i - 1) % texts for i in ids]] @ q
        return [ids[j] for j in np.argsort(-scores, kind="stable")[:n]]

    rng = np.random.default_rng(6)
    monkeypatch.setattr(vectors, "RESCORE_SHARE", 1.0)
    for _ in range(5):
        q = unit(rng.standard_normal(vectors.DIM).astype(np.float32))
        for at in (None, 12, 3):
            hits = table.search(q, 25, at=at)
            assert hits.ids == truth(q, 25, at)
            assert len(set(hits.ids)) == len(hits.ids) == 25
    # Text 1 is used by versions 1, 201 and 401; version 201 (201 % 3 == 0) was replaced at
    # position 27, the others are in memory now: asked its own vector, both of them come first,
    # in table order, and the replaced one never.
    q = unit(cosine[0])
    assert table.search(q, 3).ids[:2] == [1, 401]
    assert 201 not in table.search(q, N).ids
    assert table.search(q, 3, at=26).ids == [1, 201, 401]


def test_a_helper_taking_blocks_changes_nothing(table: vectors.VectorIndex) -> None:
    """The waiting thread takes blocks of the passes (Crew): the same hits, every block run once,
    and an error in a block taken by the helper reaches the searching thread."""
    import threading

    rng = np.random.default_rng(11)
    for at in (None, 12):
        q = unit(rng.standard_normal(vectors.DIM).astype(np.float32))
        alone = table.search(q, 50, at=at)
        crew = vectors.Crew()
        helper = threading.Thread(target=crew.help)
        helper.start()
        try:
            shared = table.search(q, 50, at=at, crew=crew)
        finally:
            crew.end()
        helper.join(timeout=10)
        assert not helper.is_alive() and shared == alone and len(alone.ids) >= 8
    runs: list[tuple[int, bool]] = []
    crew = vectors.Crew()

    def block(b: int) -> None:
        runs.append((b, threading.current_thread() is threading.main_thread()))
        time.sleep(0.002)  # long enough for both threads to take blocks
        if b == 7:
            raise ValueError("block 7")

    helper = threading.Thread(target=crew.help)
    helper.start()
    with pytest.raises(ValueError, match="block 7"):
        crew.share(40, block)
    crew.end()
    helper.join(timeout=10)
    assert sorted(b for b, _ in runs) == list(range(40)) and not helper.is_alive()
    assert {main for _, main in runs} == {True, False}  # both threads took blocks
