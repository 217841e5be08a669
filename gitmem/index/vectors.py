"""Sentence vectors in the index (migration 0004_vectors): the one module that reads and writes
`texts` and `chunk_vectors`.

- A vector belongs to a *text*: chunk versions that share their text (most versions of a file do)
  share one row of `texts`, so a text is embedded once. A chunk version is linked to its text in
  `chunk_vectors`, and searched only while it is in memory at the time asked (the same validity
  predicate as store.Filter), so `--as-of` stays exact.
- Stored as int8 with one float32 scale per vector (388 bytes instead of 1536): cosine ranks agree
  with float32 (bench/RESULTS.md, "Recall: hybrid").
- Filling is deferred (`gitmem index --vectors`, never the post-commit hook), current chunks
  first, then history, one transaction per batch: an interrupted run keeps every finished batch.
  The model is handed in as a function (the index floor never imports recall's model).
- Search is brute force in numpy over what is visible: exact float32 up to EXACT_TEXTS distinct
  texts; above that a sign-bit (Hamming) pass picks RESCORE_SHARE of them that the int8 vectors
  then score exactly (memory-bandwidth bound: float32 over 1M vectors is ~1.5 GB per query).

numpy is imported inside the functions that need it: the hook imports gitmem.index, never this.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gitmem.index.db import get_meta, set_meta

if TYPE_CHECKING:
    import numpy as np

DIM = 384
EXACT_TEXTS = 16_384  # up to this many texts a float32 copy (<= 25 MB, ~4 ms a query) is searched exactly
# Texts the sign-bit pass hands to exact int8 scoring: a share of the visible ones, since how far
# down the Hamming order a true neighbour falls grows with their number. On real turn vectors 0.4%
# kept 0.65 of the exact top 10, 1% 0.87, 5% 0.99 (bench/RESULTS.md "Recall: hybrid latency").
RESCORE_SHARE = 0.05
RESCORE_MIN = 4096
BATCH = 64  # chunk versions embedded per transaction (~1-2 s of CPU): Ctrl-C loses at most this

Embed = Callable[[list[str]], "np.ndarray"]


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def pack(vec: np.ndarray) -> bytes:
    """A unit vector as int8 bytes after its float32 scale."""
    import numpy as np

    scale = float(np.abs(vec).max()) / 127.0 or 1.0
    return np.float32(scale).tobytes() + np.round(vec / scale).astype(np.int8).tobytes()


def unpack(blobs: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(int8 matrix, float32 scales) of packed vectors."""
    import numpy as np

    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), 4 + DIM)
    scales = raw[:, :4].copy().view(np.float32).reshape(-1)
    return raw[:, 4:].copy().view(np.int8), scales


# -- the model the vectors were made with -----------------------------------------------------

def check_model(conn: sqlite3.Connection, model: str) -> bool:
    """Drop every vector when they were made by another model (or another way of embedding);
    returns whether any were dropped."""
    have = get_meta(conn, "vectors.model")
    if have == model:
        return False
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        dropped = conn.execute("SELECT EXISTS (SELECT 1 FROM texts)").fetchone()[0] == 1
        conn.execute("DELETE FROM chunk_vectors")
        conn.execute("DELETE FROM texts")
        set_meta(conn, "vectors.model", model)
    return dropped


# -- filling ----------------------------------------------------------------------------------

class Filled(NamedTuple):
    linked: int  # chunk versions given a vector
    embedded: int  # distinct texts the model embedded (the rest were known already)
    left: int  # chunk versions still without a vector (0 unless interrupted or limited)
    seconds: float


def missing_count(conn: sqlite3.Connection, current_only: bool = False) -> int:
    """Chunk versions (current ones only, or all) that have no vector."""
    cond = "c.valid_to IS NULL AND " if current_only else ""
    return int(conn.execute(
        f"SELECT count(*) FROM chunks c WHERE {cond}NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)"
    ).fetchone()[0])


class Coverage(NamedTuple):
    """How much of what is in memory now semantic recall can find (`gitmem status`)."""

    texts_embedded: int  # distinct texts of current chunk versions that have a vector
    texts_total: int  # distinct texts of current chunk versions
    chunks_missing: int  # current chunk versions without a vector
    model: str | None  # what made the vectors (None: none made yet)


def coverage(conn: sqlite3.Connection) -> Coverage:
    """Vectors of the chunks in memory now, counted by distinct text (versions share one)."""
    embedded, total = conn.execute(
        "SELECT (SELECT count(DISTINCT v.text_id) FROM chunks c JOIN chunk_vectors v ON v.chunk_id = c.id"
        " WHERE c.valid_to IS NULL), (SELECT count(DISTINCT content) FROM chunks WHERE valid_to IS NULL)").fetchone()
    return Coverage(int(embedded), int(total), missing_count(conn, current_only=True), get_meta(conn, "vectors.model"))


def has_vectors(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT EXISTS (SELECT 1 FROM chunk_vectors)").fetchone()[0] == 1


def visible_count(conn: sqlite3.Connection, at: int | None, history: bool, since: int | None, until: int | None) -> int:
    """How many chunk versions are in memory at `at` (store.Filter's timeline predicate)."""
    from gitmem.index.store import Filter

    where, _ = Filter(at=at, history=history, since=since, until=until).compile()
    return int(conn.execute(f"SELECT count(*) FROM chunks c WHERE {where.sql()}", where.params).fetchone()[0])


def _pending(conn: sqlite3.Connection, current: bool, below: int | None, n: int) -> list[tuple[int, str]]:
    """The next `n` chunk versions without a vector, newest id first (ids below `below`)."""
    conds = ["NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)",
             "c.valid_to IS NULL" if current else "c.valid_to IS NOT NULL"]
    params: list[Any] = []
    if below is not None:
        conds.append("c.id < ?")
        params.append(below)
    return [(int(i), t) for i, t in conn.execute(
        f"SELECT c.id, c.content FROM chunks c WHERE {' AND '.join(conds)} ORDER BY c.id DESC LIMIT ?", [*params, n])]


def fill(conn: sqlite3.Connection, embed: Embed, *, lock: Callable[[], Any],
         progress: Callable[[int, int], None] | None = None, limit: int | None = None,
         batch: int = BATCH) -> Filled:
    """Give every chunk version without a vector one: current chunks first, then history.

    The model runs outside any transaction; each batch is then written in one short transaction
    under `lock()` (the index's writer lock, so the hook's indexer is never held up for long).
    A chunk row deleted or replaced meanwhile (a rollback reuses ids) is checked by its text's
    digest under the lock and skipped, so a link always names the text its chunk holds."""
    t0 = time.perf_counter()
    total = missing_count(conn)
    if limit is not None:
        total = min(total, limit)
    linked = embedded = 0
    for current in (True, False):
        below: int | None = None
        while linked < total:
            rows = _pending(conn, current, below, min(batch, total - linked))
            if not rows:
                break
            below = rows[-1][0]
            digests = {cid: digest(text) for cid, text in rows}
            known = _text_ids(conn, list(set(digests.values())))
            new = {digests[cid]: text for cid, text in rows if digests[cid] not in known}
            vecs: Any = embed(list(new.values())) if new else []
            with lock():
                with conn:
                    conn.execute("BEGIN IMMEDIATE")
                    conn.executemany("INSERT OR IGNORE INTO texts (digest, vec) VALUES (?, ?)",
                                     [(d, pack(v)) for d, v in zip(new, vecs)])
                    ids = _text_ids(conn, list(set(digests.values())))
                    still = {int(i): digest(t) for i, t in conn.execute(
                        f"SELECT id, content FROM chunks WHERE id IN ({','.join('?' * len(rows))})", [r[0] for r in rows])}
                    links = [(cid, ids[d]) for cid, d in digests.items() if still.get(cid) == d and d in ids]
                    conn.executemany("INSERT OR REPLACE INTO chunk_vectors (chunk_id, text_id) VALUES (?, ?)", links)
            linked += len(rows)
            embedded += len(new)
            if progress is not None:
                progress(linked, total)
    left = missing_count(conn)
    return Filled(linked, embedded, left, time.perf_counter() - t0)


def _text_ids(conn: sqlite3.Connection, digests: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in range(0, len(digests), 500):
        part = digests[s:s + 500]
        out.update((d, int(i)) for d, i in conn.execute(
            f"SELECT digest, id FROM texts WHERE digest IN ({','.join('?' * len(part))})", part))
    return out


# -- search -----------------------------------------------------------------------------------

class Hits(NamedTuple):
    """The dense answer: chunk ids best first with their cosine, and how many chunk versions in
    memory at the time asked have no vector yet (they cannot be found by meaning)."""

    ids: list[int]
    scores: list[float]
    missing: int
    visible: int


class VectorIndex:
    """The vectors of one index, held in memory for repeated queries (the MCP server, the warm
    embedder process, a benchmark). Reloaded when the index changed (SQLite's data_version: any
    other connection's commit), so a query never sees a stale link."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.version: int | None = None
        self.text_rows: dict[int, int] = {}
        self.i8: Any = None
        self.scales: Any = None
        self.f32: Any = None
        self.bits: Any = None
        self.load_seconds = 0.0

    def refresh(self) -> None:
        import numpy as np

        version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        if version == self.version:
            return
        t0 = time.perf_counter()
        self.version = version
        have = max(self.text_rows.values(), default=-1) + 1
        last = max(self.text_rows, default=0)
        if have and self.conn.execute("SELECT count(*) FROM texts WHERE id <= ?", (last,)).fetchone()[0] != have:
            have, last, self.text_rows, self.i8 = 0, 0, {}, None  # vectors were dropped: load all
        rows = self.conn.execute("SELECT id, vec FROM texts WHERE id > ? ORDER BY id", (last,)).fetchall()
        if rows or self.i8 is None:
            i8, scales = unpack([r[1] for r in rows]) if rows else (np.zeros((0, DIM), np.int8), np.zeros(0, np.float32))
            self.i8 = i8 if self.i8 is None else np.concatenate([self.i8, i8])
            self.scales = scales if self.scales is None or not have else np.concatenate([self.scales, scales])
            self.text_rows.update((int(r[0]), have + n) for n, r in enumerate(rows))
            n = len(self.i8)
            if n <= EXACT_TEXTS:
                self.f32, self.bits = self.i8.astype(np.float32) * self.scales[:, None], None
            else:
                self.f32 = None
                # Column-major: six contiguous arrays of 64 sign bits, so a query is 6 passes over n
                # words (a row-major sum over 6 columns cost ~3x more).
                self.bits = np.ascontiguousarray(np.packbits(self.i8 > 0, axis=1).view(np.uint64).T)
        cur = self.conn.cursor()
        cur.row_factory = None
        table = cur.execute("SELECT c.id, c.valid_from, coalesce(c.valid_to, 0), coalesce(v.text_id, 0)"
                            " FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_id = c.id").fetchall()
        arr = np.array(table, dtype=np.int64).reshape(-1, 4)
        self.chunk_ids = arr[:, 0]
        self.valid_from = arr[:, 1]
        self.valid_to = arr[:, 2]
        lookup = np.full(max(self.text_rows, default=0) + 1, -1, dtype=np.int64)
        if self.text_rows:
            lookup[np.fromiter(self.text_rows.keys(), np.int64)] = np.fromiter(self.text_rows.values(), np.int64)
        self.row_of = lookup[arr[:, 3]]  # -1: no vector (text id 0 never exists)
        self.load_seconds = time.perf_counter() - t0

    def visible(self, at: int | None, history: bool = False, since: int | None = None,
                until: int | None = None) -> np.ndarray:
        """Which chunk versions are in memory: store.Filter's timeline predicate, in numpy."""
        vf, vt = self.valid_from, self.valid_to
        if at is not None:
            mask = vf <= at if history else (vf <= at) & ((vt == 0) | (vt > at))
        else:
            mask = vf >= 0 if history else vt == 0
        if since is not None:
            mask &= vf > since
        if until is not None:
            mask &= vf <= until
        out: np.ndarray = mask
        return out

    def search(self, qvec: np.ndarray, n: int, at: int | None = None, history: bool = False,
               since: int | None = None, until: int | None = None) -> Hits:
        """The `n` visible chunk versions nearest to the unit vector `qvec`, best first."""
        import numpy as np

        self.refresh()
        vis = self.visible(at, history, since, until)
        has = vis & (self.row_of >= 0)
        n_vis, n_has = int(vis.sum()), int(has.sum())
        if not n_has or n <= 0:
            return Hits([], [], n_vis - n_has, n_vis)
        idx = np.nonzero(has)[0]
        rows = self.row_of[idx]
        q = qvec.astype(np.float32)
        if self.f32 is not None:
            text_scores = self.f32 @ q
        else:
            tmask = np.zeros(len(self.i8), dtype=bool)
            tmask[rows] = True
            qbits = np.packbits(q > 0).view(np.uint64)
            ham = np.zeros(len(self.i8), dtype=np.uint16)
            for col, qb in zip(self.bits, qbits):
                ham += np.bitwise_count(col ^ qb)
            ham[~tmask] = DIM + 1
            visible_texts = int(tmask.sum())
            k = min(max(RESCORE_MIN, int(RESCORE_SHARE * visible_texts)), visible_texts)
            cand = np.argpartition(ham, k - 1)[:k] if k < len(ham) else np.arange(len(ham))
            text_scores = np.full(len(self.i8), -2.0, dtype=np.float32)
            text_scores[cand] = (self.i8[cand].astype(np.float32) @ q) * self.scales[cand]
        scores = text_scores[rows]
        m = min(n, len(idx))
        top = np.argpartition(-scores, m - 1)[:m] if m < len(idx) else np.arange(len(idx))
        top = top[np.argsort(-scores[top], kind="stable")]
        top = top[scores[top] > -2.0]
        return Hits([int(i) for i in self.chunk_ids[idx[top]]], [float(s) for s in scores[top]], n_vis - n_has, n_vis)
