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
HAMMING_BLOCK = 65_536  # texts whose sign-bit distances are summed at a time (a block a helper may take)
HIDDEN = 512  # added to the distance of a text no visible version uses (beyond DIM: never a candidate)
RESCORE_BLOCK = 256  # int8 rows made float32 and scored at a time: stays in cache, and BLAS stays on one thread
BATCH = 64  # chunk versions embedded per transaction (~1-2 s of CPU): Ctrl-C loses at most this

Embed = Callable[[list[str]], "np.ndarray"]


def digest(text: str) -> str:
    import hashlib  # here, not at the top: a CLI recall imports this module and never needs it

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
    memory at the time asked have no vector yet (they cannot be found by meaning); `question`: the
    question's unit vector (recall.meaning compares it with the candidates' own vectors), empty
    when the source gave none."""

    ids: list[int]
    scores: list[float]
    missing: int
    visible: int
    question: Sequence[float] = ()


def vectors_of(conn: sqlite3.Connection, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
    """The stored unit vectors (float32, from their int8 form) of the chunk versions `chunk_ids`
    that have one, by chunk id: a few dozen rows, read when a question's head needs them."""
    import numpy as np

    out: dict[int, np.ndarray] = {}
    ids = list(dict.fromkeys(chunk_ids))
    for s in range(0, len(ids), 500):
        part = ids[s:s + 500]
        rows = conn.execute(f"SELECT v.chunk_id, t.vec FROM chunk_vectors v JOIN texts t ON t.id = v.text_id"
                            f" WHERE v.chunk_id IN ({','.join('?' * len(part))})", part).fetchall()
        if rows:
            i8, scales = unpack([r[1] for r in rows])
            vecs = i8.astype(np.float32) * scales[:, None]
            out.update((int(r[0]), vecs[n]) for n, r in enumerate(rows))
    return out


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
        self.now: Scope | None = None  # what is in memory now, worked out once per reload
        self.by_text: tuple[np.ndarray, np.ndarray] | None = None  # see _versions_by_text
        self.text_spans: TextSpans | None = None  # see _text_spans
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
        # Timeline positions as int32 (a position counts commits): the visibility test of an as-of
        # question reads half the bytes.
        self.valid_from = arr[:, 1].astype(np.int32)
        self.valid_to = arr[:, 2].astype(np.int32)
        lookup = np.full(max(self.text_rows, default=0) + 1, -1, dtype=np.int64)
        if self.text_rows:
            lookup[np.fromiter(self.text_rows.keys(), np.int64)] = np.fromiter(self.text_rows.values(), np.int64)
        self.row_of = lookup[arr[:, 3]]  # -1: no vector (text id 0 never exists)
        self.has_vec = self.row_of >= 0
        self.now = None
        self.by_text = None
        self.text_spans = None
        self.load_seconds = time.perf_counter() - t0

    def visible(self, at: int | None, history: bool = False, since: int | None = None,
                until: int | None = None) -> np.ndarray:
        """Which chunk versions are in memory: store.Filter's timeline predicate, in numpy."""
        return _in_memory(self.valid_from, self.valid_to, at, history, since, until)

    def _scope(self, at: int | None, history: bool, since: int | None, until: int | None) -> Scope:
        """The visible chunk versions that have a vector and the texts none of them uses (see
        Scope). What is in memory now (no time asked) is worked out once per reload: it is what
        nearly every question asks, and over 1M versions it costs ~8 ms a query."""
        import numpy as np

        key = (at, history, since, until)
        if key == (None, False, None, None) and self.now is not None:
            return self.now
        vis = self.visible(at, history, since, until)
        has = vis & self.has_vec
        if self.bits is None:
            idx = np.nonzero(has)[0]
            scope = Scope(idx, self.row_of[idx], None, int(np.count_nonzero(vis)), has, len(idx))
        else:
            scope = Scope(None, None, self._hidden(vis, at, history, since, until), int(np.count_nonzero(vis)), has,
                          int(np.count_nonzero(has)))
        if key == (None, False, None, None):
            self.now = scope
        return scope

    def _hidden(self, vis: np.ndarray, at: int | None, history: bool, since: int | None, until: int | None) -> np.ndarray:
        """Per text row: HIDDEN where no visible version (`vis`, by chunk table position) uses it,
        else 0. A text used by one version is visible when that version is, so the timeline test
        runs on the texts' own copy of their version's span, in text order (`_text_spans`): no
        gather of the visible versions' rows and scatter into the texts (~1 ms of an as-of
        question at 1M lines); only the few texts several versions share look at their versions."""
        import numpy as np

        sp = self._text_spans()
        seen = _in_memory(sp.valid_from, sp.valid_to, at, history, since, until)
        if len(sp.shared):
            seen[sp.shared] = np.logical_or.reduceat(vis[sp.versions], sp.starts)
        seen[sp.unused] = False
        hidden: np.ndarray = np.multiply(np.logical_not(seen), HIDDEN, dtype=np.uint16)
        return hidden

    def _text_spans(self) -> TextSpans:
        """Each text row's version span for `_hidden`, built once per reload: a text used by one
        version has that version's valid_from / valid_to; the texts several versions share are
        listed with their versions, and those no version uses."""
        import numpy as np

        if self.text_spans is None:
            order, starts = self._versions_by_text()
            count = np.diff(starts)
            if len(order):
                # A text no version uses takes a neighbour's span (`unused` hides it after the test).
                first = order[np.minimum(starts[:-1], len(order) - 1)]
                vf, vt = self.valid_from[first], self.valid_to[first]
            else:
                vf = vt = np.zeros(len(count), np.int32)
            shared = np.flatnonzero(count > 1)
            n = count[shared]
            versions = order[np.repeat(starts[shared] - np.cumsum(n) + n, n) + np.arange(int(n.sum()))]
            self.text_spans = TextSpans(vf, vt, shared, versions, np.cumsum(count[shared]) - count[shared],
                                        np.flatnonzero(count == 0))
        return self.text_spans

    def search(self, qvec: np.ndarray, n: int, at: int | None = None, history: bool = False,
               since: int | None = None, until: int | None = None, crew: Crew | None = None) -> Hits:
        """The `n` visible chunk versions nearest to the unit vector `qvec`, best first (`crew`:
        threads that may take blocks of the sign-bit and rescoring passes, see Crew)."""
        import numpy as np

        self.refresh()
        sc = self._scope(at, history, since, until)
        n_has = sc.found
        if not n_has or n <= 0:
            return Hits([], [], sc.visible - n_has, sc.visible)
        q = qvec.astype(np.float32)
        if self.f32 is None:
            cand = self._candidates(q, sc, crew)
            pos, best = self._best_versions(cand, self._rescore(cand, q, crew), n, sc)
            return Hits(self.chunk_ids[pos].tolist(), best.tolist(), sc.visible - n_has, sc.visible)
        idx, rows = sc.idx, sc.rows
        assert idx is not None and rows is not None  # the exact path's scope has them
        scores = (self.f32 @ q)[rows]
        m = min(n, len(idx))
        top = np.argpartition(-scores, m - 1)[:m] if m < len(idx) else np.arange(len(idx))
        top = top[np.argsort(-scores[top], kind="stable")]
        return Hits([int(i) for i in self.chunk_ids[idx[top]]], [float(s) for s in scores[top]],
                    sc.visible - n_has, sc.visible)

    def _best_versions(self, cand: np.ndarray, cscores: np.ndarray, n: int, sc: Scope) -> tuple[np.ndarray, np.ndarray]:
        """The `n` best visible chunk versions (positions in the chunk table, best first; equal
        scores in table order) and their scores, from the scores of the candidate texts `cand`.
        Only the best texts are looked at: the n best versions use at most the n best texts (every
        candidate is used by a visible version), so the positions of those texts (and of any text
        tied with the last) hold them. Scattering the text scores over every visible version and
        partitioning those cost ~3.5 ms a query at 1M lines; this ~0.3 ms."""
        import numpy as np

        k = min(n, len(cand))
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        least = np.partition(cscores, len(cscores) - k)[len(cscores) - k]
        keep = cscores >= least
        texts, tscores = cand[keep], cscores[keep]
        order, starts = self._versions_by_text()
        first, count = starts[texts], starts[texts + 1] - starts[texts]
        which = np.repeat(np.arange(len(texts)), count)  # each version's text, by its index in `texts`
        pos = order[np.repeat(first - np.cumsum(count) + count, count) + np.arange(int(count.sum()))]
        seen = sc.mask[pos]
        pos, scores = pos[seen], tscores[which][seen]
        top = np.lexsort((pos, -scores))[:n]
        return pos[top], scores[top]

    def _versions_by_text(self) -> tuple[np.ndarray, np.ndarray]:
        """The chunk versions that have a vector grouped by text row: positions `order[starts[t]:
        starts[t + 1]]` (in table order) use text row t. Built once per reload (~0.2 s at 1M)."""
        import numpy as np

        if self.by_text is None:
            have = np.nonzero(self.has_vec)[0]
            order = have[np.argsort(self.row_of[have], kind="stable")]
            starts = np.searchsorted(self.row_of[order], np.arange(len(self.i8) + 1))
            self.by_text = (order, starts)
        return self.by_text

    def _candidates(self, q: np.ndarray, sc: Scope, crew: Crew | None = None) -> np.ndarray:
        """The visible texts nearest to `q` by sign bits (Hamming distance), RESCORE_SHARE of them,
        in row order. Distances are summed HAMMING_BLOCK texts at a time (the temporaries stay in
        cache: ~1.7x cheaper than whole columns at 1M); the count comes from a histogram of the
        distances rather than a partition of all of them (~3x cheaper at 1M), and the row order
        keeps the rescoring's reads in step. With a `crew`, its helpers take some of the blocks."""
        import numpy as np

        assert sc.hidden is not None  # the sign-bit path always has it
        hidden = sc.hidden
        n = len(self.i8)
        qbits = np.packbits(q > 0).view(np.uint64)
        ham = np.empty(n, dtype=np.uint16)
        blocks = -(-n // HAMMING_BLOCK)
        counts = np.empty((blocks, HIDDEN + DIM + 1), dtype=np.int64)

        def block(b: int) -> None:
            s = b * HAMMING_BLOCK
            e = min(n, s + HAMMING_BLOCK)
            w, c, h = np.empty(e - s, dtype=np.uint64), np.empty(e - s, dtype=np.uint8), ham[s:e]
            # Each half of the bits (at most 192 apart) summed in uint8, the two halves then in
            # uint16: adding uint8 counts into uint16 column by column cast each (~6% of the pass).
            halves = np.empty(e - s, dtype=np.uint8), np.empty(e - s, dtype=np.uint8)
            for j, (col, qb) in enumerate(zip(self.bits, qbits)):
                half = halves[j * 2 // len(qbits)]
                np.bitwise_xor(col[s:e], qb, out=w)
                if j % (len(qbits) // 2):
                    np.add(half, np.bitwise_count(w, out=c), out=half)
                else:
                    np.bitwise_count(w, out=half)
            np.add(halves[0], halves[1], out=h, dtype=np.uint16)
            h += hidden[s:e]  # texts no visible version uses lie beyond any distance
            # The block's histogram while it is in cache, on the thread that ran it (a helper takes
            # its share): 1.3 ms in all at 1M texts against 1.75 for one over all distances after.
            counts[b] = np.bincount(h, minlength=HIDDEN + DIM + 1)

        _share(crew, blocks, block)
        cum = np.cumsum(counts.sum(axis=0))
        visible_texts = int(cum[DIM])
        k = min(max(RESCORE_MIN, int(RESCORE_SHARE * visible_texts)), visible_texts)
        h_k = int(np.searchsorted(cum, k))  # the distance at which the k-th nearest text lies
        # Every text nearer than h_k, and the first of those at h_k (row order) up to k in all:
        # one pass picks both, already in row order.
        out: np.ndarray = np.flatnonzero(ham <= h_k)
        at_h = np.flatnonzero(ham[out] == h_k)
        extra = len(out) - k  # the last `extra` at h_k are not taken
        if extra > 0:
            out = np.delete(out, at_h[len(at_h) - extra:])
        return out

    def _rescore(self, cand: np.ndarray, q: np.ndarray, crew: Crew | None = None) -> np.ndarray:
        """Exact cosines of the candidate texts from their int8 vectors, RESCORE_BLOCK rows at a
        time: converting all of them to float32 at once wrote ~77 MB at 1M texts and handed BLAS a
        matrix big enough to wake its threads (5-6x the CPU, bench/RESULTS.md "Recall: hybrid, wave 6")."""
        import numpy as np

        out = np.empty(len(cand), dtype=np.float32)

        def block(b: int) -> None:
            part = cand[b * RESCORE_BLOCK:(b + 1) * RESCORE_BLOCK]
            out[b * RESCORE_BLOCK:b * RESCORE_BLOCK + len(part)] = np.take(self.i8, part, axis=0).astype(np.float32) @ q

        _share(crew, -(-len(cand) // RESCORE_BLOCK), block)
        res: np.ndarray = out * self.scales[cand]
        return res


def _in_memory(vf: np.ndarray, vt: np.ndarray, at: int | None, history: bool, since: int | None,
               until: int | None) -> np.ndarray:
    """store.Filter's timeline predicate over spans (valid_from, valid_to; 0: still open), in numpy."""
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


def _share(crew: Crew | None, blocks: int, fn: Callable[[int], None]) -> None:
    if crew is None:
        for b in range(blocks):
            fn(b)
    else:
        crew.share(blocks, fn)


class Crew:
    """Threads lending a hand to one search. The searching thread hands out the blocks of a pass
    (`share`); a thread with nothing else to do until the search ends (a recall session whose
    lexical side is done, waiting for the dense hits) takes blocks too (`help`) until `end`.
    numpy releases the GIL in each block, so on two cores what is left of the search when the
    helper arrives takes about half as long. The results are the same whoever runs a block."""

    def __init__(self) -> None:
        import threading

        self.cond = threading.Condition()
        self.work: Callable[[], None] | None = None
        self.over = False

    def share(self, blocks: int, fn: Callable[[int], None]) -> None:
        """fn(0) ... fn(blocks - 1), each once, by this thread and any helper; returns when all
        have run (raising the first error one of them raised)."""
        todo = iter(range(blocks))  # next() on it is one call under the GIL: each block is taken once
        left = [blocks]
        errors: list[BaseException] = []

        def take() -> None:
            for b in todo:
                try:
                    fn(b)
                except BaseException as exc:  # handed to the searching thread
                    errors.append(exc)
                with self.cond:
                    left[0] -= 1
                    if not left[0]:
                        self.cond.notify_all()

        with self.cond:
            self.work = take
            self.cond.notify_all()
        take()
        with self.cond:
            while left[0]:
                self.cond.wait()
            self.work = None
            self.cond.notify_all()
        if errors:
            raise errors[0]

    def help(self) -> None:
        """Take blocks of each pass shared from now until `end`."""
        done: Callable[[], None] | None = None
        while True:
            with self.cond:
                while not self.over and (self.work is None or self.work is done):
                    self.cond.wait()
                if self.over or self.work is None:
                    return
                work = done = self.work
            work()

    def end(self) -> None:
        """The search is over (or failed): helpers return."""
        with self.cond:
            self.over = True
            self.cond.notify_all()


class Scope(NamedTuple):
    """Which vectors a search may return at one time asked (VectorIndex._scope)."""

    idx: np.ndarray | None  # positions (in the chunk table) of the visible chunk versions with a vector (exact path only)
    rows: np.ndarray | None  # their text rows (exact path only)
    hidden: np.ndarray | None  # per text row: HIDDEN where no visible version uses it, else 0 (sign-bit path only)
    visible: int  # chunk versions in memory at that time, with a vector or not
    mask: np.ndarray  # per chunk table position: visible and has a vector (idx is where it is true)
    found: int  # how many are (visible and have a vector)


class TextSpans(NamedTuple):
    """Per text row, the span of the one version that uses it (VectorIndex._text_spans), and the
    texts whose visibility is not that: the shared ones (their versions grouped by text, each
    group from `starts`) and the unused ones."""

    valid_from: np.ndarray
    valid_to: np.ndarray
    shared: np.ndarray  # text rows several versions use
    versions: np.ndarray  # their versions' chunk table positions, text by text
    starts: np.ndarray  # where each shared text's versions start in `versions`
    unused: np.ndarray  # text rows no version uses
