"""The index's read side: every question asked of the `chunks`/`commits` tables (and `wt_chunks`,
`chunk_entities`, the FTS tables) outside the indexer is answered here, so the schema (see
migrations.py) has one reader. Recall, views and reflection ask these functions; none of them
spells SQL on the index.

Two rules of the schema that everything else relies on:
- validity: a chunk version is in memory at timeline position p when valid_from <= p < valid_to
  (valid_to NULL: still current). `Filter` compiles that (and the other recall filters) once for
  both the committed `chunks` and the working-tree overlay `wt_chunks`.
- row ids follow the timeline: no chunk recorded after position p has an id at or below
  `id_bound(p)`, so FTS5 can skip those rows instead of scoring them.
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gitmem import layout
from gitmem.errors import BadQuery, BadRevision, sqlite_code

if TYPE_CHECKING:  # the hook path imports this module: no dataclasses at runtime (see parse/model.py)
    from gitmem.timeline.when import Point

# FTS5 column weights for bm25: content, heading, path, entities. The text carries the answer, an
# @mention of the entity asked about is strong evidence, headings and file names help a little
# (every daily log shares them): 0.613 R@10 on LoCoMo with the rerank, vs 0.603 for plain FTS5.
BM25_WEIGHTS = (1.0, 0.3, 0.2, 2.0)
# At most this many rows are scored by bm25 per question (~1.2 us each, whatever LIMIT says): the
# rarest terms first, then the newest matches. 5000 -> 3000 took a 1M-line p95 from ~21 to ~17 ms.
SCORED_ROWS = 3000

COLS = ("c.id, c.path, c.start_line, c.end_line, c.heading, c.kind, c.fact, c.entities, c.confidence,"
        " c.event_start, c.event_end, c.content")
# last_day: the end of a statement that holds for a while only (index/dating.py), read at index time.
COLS_ALL = COLS + ", c.valid_from, c.valid_to, c.successor, c.last_day"
NAMES_ALL = tuple(c.strip()[2:] for c in COLS_ALL.split(","))
# Candidates are ranked as plain tuples (or Rows) in COLS order: cheaper than Rows by name.
ID, PATH, START, END, HEADING, KIND, FACT, ENTITIES, EVENT_START, EVENT_END, CONTENT = 0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11
LAST_DAY = 15  # committed rows only (COLS_ALL, COLS_RANK): the overlay's are never dated (currency.settle)
# The ranked candidates carry only what ranking reads, in the same positions (NULL elsewhere):
# building ~700 full rows per question cost ~1 ms at 1M lines; the few returned are re-read whole.
COLS_RANK = ", ".join(
    c if i in (ID, PATH, START, END, KIND, FACT, ENTITIES, EVENT_START, EVENT_END, CONTENT, LAST_DAY) else "NULL"
    for i, c in enumerate(COLS_ALL.split(", "))
)
# Memory a reflection reads: outside bank/ (its own output), facts or notes that name someone.
_MEMORY = f"c.path NOT LIKE '{layout.BANK_DIR}/%' AND (c.fact = 1 OR c.entities != '')"


# A bm25 candidate: a row (a whole Row, or a COLS_RANK tuple) and its score (None: no words asked).
Scored = tuple[sqlite3.Row | tuple[Any, ...], float | None]


class Where(NamedTuple):
    """SQL conditions on a chunk table aliased `c`, and their parameters in order."""

    conds: tuple[str, ...]
    params: tuple[Any, ...]

    def sql(self) -> str:
        return " AND ".join(self.conds) or "1"

    def tail(self) -> str:
        return "".join(f" AND {x}" for x in self.conds)


class Filter(NamedTuple):
    """What recall may return, as typed values; `compile()` gives the SQL for both tables."""

    at: int | None = None  # as-of position (None: now)
    history: bool = False  # also versions that ended (before `at`, or at all)
    since: int | None = None  # recorded after this position
    until: int | None = None  # recorded at or before this position
    kinds: tuple[str, ...] = ()
    entity: str | None = None  # an entity key
    during: tuple[str, str] | None = None  # event-time window, ISO dates
    hide_dirty: bool = False  # leave out committed rows of files edited in the working tree

    @property
    def timeline_only(self) -> bool:
        """Only the timeline filters apply (at, history, since, until): what `compile` adds for the
        text (kinds, entity, event time) and for a dirty working tree is empty."""
        return not (self.kinds or self.entity or self.during or self.hide_dirty)

    def compile(self) -> tuple[Where, Where]:
        """(committed `chunks`, overlay `wt_chunks`): the overlay has no timeline, so only the
        filters on the text itself (kind, entity, event time) apply to it."""
        timeline: list[tuple[str, list[Any]]] = []
        if self.at is not None:
            if self.history:
                timeline.append(("c.valid_from <= ?", [self.at]))
            else:
                timeline.append(("c.valid_from <= ? AND (c.valid_to IS NULL OR c.valid_to > ?)", [self.at, self.at]))
        elif not self.history:
            timeline.append(("c.valid_to IS NULL", []))
        if self.since is not None:
            timeline.append(("c.valid_from > ?", [self.since]))
        if self.until is not None:
            timeline.append(("c.valid_from <= ?", [self.until]))
        text: list[tuple[str, list[Any]]] = []
        if self.kinds:
            text.append((f"c.kind IN ({','.join('?' * len(self.kinds))})", list(self.kinds)))
        if self.entity:
            text.append(("(' ' || c.entities || ' ') LIKE ?", [f"% {self.entity} %"]))
        if self.during:
            start, end = self.during
            text.append(("c.event_start IS NOT NULL AND c.event_start <= ? AND c.event_end >= ?", [end, start]))
        tail: list[tuple[str, list[Any]]] = [("c.path NOT IN (SELECT path FROM wt_files)", [])] if self.hide_dirty else []
        return _where([*timeline, *text, *tail]), _where(text)


def quote(term: str) -> str:
    """One FTS5 phrase: a term that can carry no query syntax."""
    return '"' + term.replace('"', '""') + '"'


def _where(parts: list[tuple[str, list[Any]]]) -> Where:
    return Where(tuple(c for c, _ in parts), tuple(p for _, ps in parts for p in ps))


# -- positions on the timeline ------------------------------------------------------------------

def position_at(conn: sqlite3.Connection, point: "Point") -> int:
    """The timeline position memory stood at, at `point`.

    For a revision: that commit's position (it must be on the indexed first-parent chain).
    For a time: the last position whose record_time (running max of committer times) is <= it,
    so a commit dated earlier but committed after a later-dated one can never leak in.
    0 means "before the first commit": nothing was in memory yet.
    """
    if point.oid is not None:
        pos = position_of(conn, point.oid)
        if pos is None:
            raise BadRevision(
                f"{point.text!r} ({point.oid[:12]}) is not on the indexed branch's first-parent history",
                "name a commit on the current branch, or a date",
            )
        return pos
    return _last_pos_by_time(conn, "<=", point.timestamp)


def position_before(conn: sqlite3.Connection, timestamp: int) -> int:
    """The last position recorded strictly before `timestamp` (0: none)."""
    return _last_pos_by_time(conn, "<", timestamp)


def _last_pos_by_time(conn: sqlite3.Connection, op: str, timestamp: int) -> int:
    # record_time never decreases along pos (migrations.py), so the newest position at or before a
    # time is the last entry of the (record_time, pos) index below it: one index step backwards.
    # `max(pos) ... WHERE record_time <= ?` read the whole range instead (3.9 ms at 40k commits).
    row = conn.execute(f"SELECT pos FROM commits WHERE record_time {op} ? ORDER BY record_time DESC, pos DESC LIMIT 1",
                       (timestamp,)).fetchone()
    return int(row[0]) if row else 0


def position_of(conn: sqlite3.Connection, oid: str) -> int | None:
    """The position of indexed commit `oid` (None: not on the indexed chain)."""
    row = conn.execute("SELECT pos FROM commits WHERE oid = ?", (oid,)).fetchone()
    return int(row[0]) if row else None


def last_position(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT max(pos) FROM commits").fetchone()
    return int(row[0] or 0)


def last_commit_time(conn: sqlite3.Connection) -> tuple[int | None, int | None]:
    """(newest position, newest record time) of the indexed commits; (None, None) when empty."""
    # Two subqueries: each max() is one index step; both in one SELECT scan the table (7.5 ms at 40k commits).
    row = conn.execute("SELECT (SELECT max(pos) FROM commits), (SELECT max(record_time) FROM commits)").fetchone()
    return row[0], row[1]


def positions_newest_first(conn: sqlite3.Connection) -> Iterable[tuple[int, str]]:
    """(position, oid) of every indexed commit, newest first."""
    return ((int(pos), oid) for pos, oid in conn.execute("SELECT pos, oid FROM commits ORDER BY pos DESC"))


def commit_at(conn: sqlite3.Connection, pos: int) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute("SELECT * FROM commits WHERE pos = ?", (pos,)).fetchone()
    return row


def commits_at(conn: sqlite3.Connection, positions: set[int]) -> dict[int, sqlite3.Row]:
    if not positions:
        return {}
    marks = ",".join("?" * len(positions))
    return {r["pos"]: r for r in conn.execute(f"SELECT * FROM commits WHERE pos IN ({marks})", list(positions))}


def commits_by_oid(conn: sqlite3.Connection, oids: list[str]) -> dict[str, sqlite3.Row]:
    """Author and message of the indexed commits `oids`."""
    rows = conn.execute(f"SELECT oid, author, message FROM commits WHERE oid IN ({','.join('?' * len(oids))})", oids)
    return {r["oid"]: r for r in rows}


def id_bound(conn: sqlite3.Connection, pos: int) -> int | None:
    """The largest chunk id that can be in memory at `pos` (None: every id can)."""
    row = conn.execute("SELECT id FROM chunks WHERE valid_from > ? ORDER BY valid_from, id LIMIT 1", (pos,)).fetchone()
    return None if row is None else int(row[0]) - 1


# -- rows -----------------------------------------------------------------------------------------

def chunk_exists(conn: sqlite3.Connection, chunk_id: int) -> bool:
    return conn.execute("SELECT 1 FROM chunks WHERE id = ?", (chunk_id,)).fetchone() is not None


def rows_by_id(conn: sqlite3.Connection, ids: list[int]) -> list[sqlite3.Row]:
    """Whole chunk rows (COLS_ALL), in the order of `ids`."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT {COLS_ALL} FROM chunks c WHERE c.id IN ({marks})", ids).fetchall()
    order = {i: n for n, i in enumerate(ids)}
    return sorted(rows, key=lambda r: order[r["id"]])


def tuples_by_id(conn: sqlite3.Connection, cols: str, ids: list[int], where: Where | None = None) -> dict[int, tuple[Any, ...]]:
    """Plain-tuple rows (cheaper than Rows) of the chunks `ids` that also pass `where`, by id."""
    cur = conn.cursor()
    cur.row_factory = None
    cond, params = (where.tail(), where.params) if where else ("", ())
    sql = f"SELECT {cols} FROM chunks c WHERE c.id IN ({','.join('?' * len(ids))}){cond}"
    return {r[ID]: r for r in cur.execute(sql, [*ids, *params])}


def readings(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    """The stored readings of the chunks `ids` that have one (index/readings.py `unpack` reads the
    columns after the id), by id."""
    cur = conn.cursor()
    cur.row_factory = None
    sql = f"SELECT chunk_id, subject, relation, attrs, words, flags FROM readings WHERE chunk_id IN ({','.join('?' * len(ids))})"
    return {r[0]: r[1:] for r in cur.execute(sql, ids)}


def predecessor_of(conn: sqlite3.Connection, chunk_id: int) -> int | None:
    row = conn.execute("SELECT id FROM chunks WHERE successor = ? ORDER BY id LIMIT 1", (chunk_id,)).fetchone()
    return None if row is None else int(row[0])


def successor_of(conn: sqlite3.Connection, chunk_id: int) -> int | None:
    row = conn.execute("SELECT successor FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def predecessors(conn: sqlite3.Connection, ids: list[int]) -> dict[int, int]:
    """successor id -> the chunk it replaced, for the chunks `ids`."""
    if not ids:
        return {}
    rows = conn.execute(f"SELECT id, successor FROM chunks WHERE successor IN ({','.join('?' * len(ids))})", ids)
    return {r[1]: r[0] for r in rows}


def ids_added(conn: sqlite3.Connection, p0: int, p1: int) -> list[int]:
    """Chunks recorded after position p0, up to p1."""
    return [r[0] for r in conn.execute(
        "SELECT id FROM chunks WHERE valid_from > ? AND valid_from <= ? ORDER BY id", (p0, p1))]


def ids_ended(conn: sqlite3.Connection, p0: int, p1: int) -> list[int]:
    """Chunks whose version ended after position p0, up to p1."""
    return [r[0] for r in conn.execute(
        "SELECT id FROM chunks WHERE valid_to > ? AND valid_to <= ? ORDER BY id", (p0, p1))]


def entity_pages(conn: sqlite3.Connection, at: int | None, prefix: str) -> list[sqlite3.Row]:
    """(path, valid_from) of the pages under `prefix` in memory now (or at position `at`), newest first."""
    where, _ = Filter(at=at).compile()
    return conn.execute(
        f"SELECT DISTINCT c.path, c.valid_from FROM chunks c WHERE c.path LIKE '{prefix}%' AND {where.sql()}"
        " ORDER BY c.valid_from DESC", where.params
    ).fetchall()


def entity_known(conn: sqlite3.Connection, keys: Sequence[str]) -> list[str]:
    """The entity keys, in order and once each, that some chunk mentions."""
    # One index probe per key: DISTINCT over `IN` would read every mention of a common entity.
    probe = "SELECT 1 FROM chunk_entities WHERE entity = ? LIMIT 1"
    return [k for k in dict.fromkeys(keys) if conn.execute(probe, (k,)).fetchone()]


# -- supersession and copies (written by the indexer, see gitmem/index/supersede.py) -----------

class Link(NamedTuple):
    """`old` is no longer the current statement of its fact: `new` replaced it, for `reason`."""

    old: int
    new: int
    reason: str


def superseded_by(conn: sqlite3.Connection, ids: Sequence[int], at: int | None = None) -> dict[int, Link]:
    """For the chunks `ids` that a newer statement had replaced at position `at` (None: now):
    old id -> the newest such link. Only supersession known then counts (recorded at or before
    `at`), and only while the newer statement is still in memory then (or was edited into a
    later version of itself): deleting "Moved to Madrid" makes "Lives in Porto" current again.
    This is the one place the `supersessions` table is read for whether a statement is current:
    recall, `why` and reflection pages all ask here (`current = chunk_id not in
    superseded_by(conn, [chunk_id])`); `supersedes_what` reads the other direction, for `why`."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    if at is None:
        live, params = "(n.valid_to IS NULL OR n.successor IS NOT NULL)", [*ids]
    else:
        live, params = "s.pos <= ? AND (n.valid_to IS NULL OR n.valid_to > ? OR n.successor IS NOT NULL)", [*ids, at, at]
    out: dict[int, Link] = {}
    for old, new, reason in conn.execute(
            f"SELECT s.old, s.new, s.reason FROM supersessions s JOIN chunks n ON n.id = s.new"
            f" WHERE s.old IN ({marks}) AND {live} ORDER BY s.new", params):
        out[old] = Link(old, new, reason)  # ascending: the newest link wins
    return out


def supersedes_what(conn: sqlite3.Connection, chunk_id: int) -> list[Link]:
    """The statements chunk `chunk_id` replaced (for `why`)."""
    return [Link(o, n, r) for o, n, r in conn.execute(
        "SELECT old, new, reason FROM supersessions WHERE new = ? ORDER BY old", (chunk_id,))]


def originals_of(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, int]:
    """bank/ copy id -> the memory chunk it quotes, for the chunks `ids` that are such copies."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return dict(conn.execute(f"SELECT copy, original FROM copies WHERE copy IN ({marks})", list(ids)).fetchall())


def copies_in_memory(conn: sqlite3.Connection, originals: Sequence[int], where: Where) -> dict[int, list[int]]:
    """original id -> its bank/ copies that pass `where` (in memory at the answer's position)."""
    if not originals:
        return {}
    marks = ",".join("?" * len(originals))
    out: dict[int, list[int]] = {}
    # CROSS JOIN keeps `copies` the outer table (SQLite never reorders it): without it the planner
    # walked every current chunk by `chunks_to` (valid_to IS NULL) and probed `copies` for each,
    # ~28% of a question's time at 100k lines; from the originals it is a few index probes.
    for copy, original in conn.execute(
            f"SELECT k.copy, k.original FROM copies k CROSS JOIN chunks c ON c.id = k.copy"
            f" WHERE k.original IN ({marks}){where.tail()} ORDER BY k.copy", [*originals, *where.params]):
        out.setdefault(original, []).append(copy)
    return out


def has_links(conn: sqlite3.Connection) -> bool:
    """Whether any supersession or copy was derived (a session skips the lookups otherwise)."""
    return conn.execute("SELECT EXISTS (SELECT 1 FROM supersessions) OR EXISTS (SELECT 1 FROM copies)").fetchone()[0] == 1


# -- what a reflection reads ----------------------------------------------------------------------

def memory_added_after(conn: sqlite3.Connection, start: int) -> list[sqlite3.Row]:
    """Current reflectable memory recorded after position `start`, in commit order."""
    return conn.execute(
        f"SELECT {COLS_ALL} FROM chunks c WHERE c.valid_from > ? AND c.valid_to IS NULL AND {_MEMORY}"
        " ORDER BY c.valid_from, c.path, c.start_line", (start,)).fetchall()


def paths_added(conn: sqlite3.Connection, start: int, end: int) -> list[str]:
    """Every file with a current chunk recorded after `start`, up to `end`."""
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT path FROM chunks WHERE valid_from > ? AND valid_from <= ? AND valid_to IS NULL ORDER BY path",
        (start, end))]


def memory_mentioning(conn: sqlite3.Connection, key: str, limit: int) -> list[sqlite3.Row]:
    """Current reflectable memory (not opinions) that mentions entity `key`, newest first."""
    return conn.execute(
        f"SELECT {COLS_ALL} FROM chunk_entities e JOIN chunks c ON c.id = e.chunk_id"
        f" WHERE e.entity = ? AND c.valid_to IS NULL AND {_MEMORY} AND c.kind != 'opinion'"
        " ORDER BY c.valid_from DESC, c.path, c.start_line LIMIT ?", (key, limit)).fetchall()


def current_facts(conn: sqlite3.Connection, kind: str) -> list[sqlite3.Row]:
    """Current typed facts of `kind` outside bank/, by event time."""
    return conn.execute(
        f"SELECT {COLS_ALL} FROM chunks c WHERE c.valid_to IS NULL AND c.fact = 1 AND c.kind = ?"
        f" AND c.path NOT LIKE '{layout.BANK_DIR}/%' ORDER BY coalesce(c.event_start, ''), c.path, c.start_line", (kind,)).fetchall()


def current_opinions(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Current opinion facts outside bank/, in commit order."""
    return conn.execute(
        f"SELECT {COLS_ALL} FROM chunks c WHERE c.valid_to IS NULL AND c.fact = 1 AND c.kind = 'opinion'"
        f" AND c.path NOT LIKE '{layout.BANK_DIR}/%' ORDER BY c.valid_from, c.path, c.start_line").fetchall()


def current_text_containing(conn: sqlite3.Connection, words: Sequence[str]) -> list[str]:
    """The text of current chunks outside bank/ holding any of `words` (case-insensitive), oldest first."""
    if not words:
        return []
    like = " OR ".join("lower(c.content) LIKE ?" for _ in words)
    return [r[0] for r in conn.execute(
        f"SELECT c.content FROM chunks c WHERE c.valid_to IS NULL AND c.path NOT LIKE '{layout.BANK_DIR}/%' AND ({like})"
        " ORDER BY c.valid_from, c.path, c.start_line", [f"%{w.lower()}%" for w in words])]


# -- full-text search -----------------------------------------------------------------------------

def _rowid_range(col: str, low: int | None, high: int | None) -> tuple[list[str], list[int]]:
    conds, params = [], []
    if low is not None:
        conds.append(f"{col} >= ?")
        params.append(low)
    if high is not None:
        conds.append(f"{col} <= ?")
        params.append(high)
    return conds, params


def _bad_query(match: str, exc: sqlite3.OperationalError) -> Exception:
    # The SQL around MATCH is fixed, so a plain SQLITE_ERROR can only come from the expression
    # (syntax, `*` alone: "unknown special query", an unknown column filter); a full disk, a
    # locked index or a missing table is not the query's fault and is reported as what it is.
    if sqlite_code(exc) in ("SQLITE_ERROR", "") and "no such table" not in str(exc):
        return BadQuery(f"the FTS5 query {match!r} is malformed: {exc}",
                        "drop --raw to search plain words, or fix the FTS5 syntax (quote terms with double quotes)")
    return exc


def doc_freqs(conn: sqlite3.Connection, parts: Iterable[str], bound: int | None) -> dict[str, int]:
    """How many chunks (at or below row id `bound`) each query part matches, counted up to
    SCORED_ROWS + 1: the cost of counting stays bounded, and past that only "too many" matters."""
    conds, rparams = _rowid_range("rowid", None, bound)
    rowids = "".join(f" AND {x}" for x in conds)
    return {part: _count(conn, quote(part), rowids, rparams, SCORED_ROWS + 1) for part in parts}


def _count(conn: sqlite3.Connection, match: str, rowids: str, rparams: list[int], cap: int) -> int:
    """How many rows (within `rowids`) `match` matches, counted up to `cap`: FTS5 stops reading there."""
    return int(conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ?{rowids} LIMIT ?)",
                            [match, *rparams, cap]).fetchone()[0])


def opening(conn: sqlite3.Connection, word: str, bound: int | None, n: int = 20) -> list[str]:
    """The content of up to `n` chunks (at or below row id `bound`) whose content starts with the
    term `word` (FTS5's initial-token query: "Caroline: ..." for "caroline"), oldest first."""
    conds, rparams = _rowid_range("rowid", None, bound)
    rowids = "".join(f" AND {x}" for x in conds)
    return [r[0] for r in conn.execute(
        f"SELECT content FROM chunks WHERE id IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?{rowids}"
        " LIMIT ?)", [f"content : ^{quote(word)}", *rparams, n])]


def match_plan(conn: sqlite3.Connection, freqs: dict[str, int], bound: int | None) -> tuple[str, int | None]:
    """The MATCH expression to score, and a lowest row id to score from (None: all).

    bm25 costs ~1.2 us per matching row, whatever LIMIT says, so a question of common words
    over a 1M-line memory would cost 50+ ms. Terms are taken rarest first while the rows they
    match add up to at most SCORED_ROWS. The rows left over go to rows holding two of the terms
    left out: at scale the rarest word of a question is often not in the answer, which holds its
    common words together (a name and what they did). Each term left out, rarest first, with the
    more common ones after it (`a AND (b OR c ...)`) is scored when its rows fit what is left; terms
    in no clause still count in the rerank's term coverage. When even the rarest term matches
    more, only its newest SCORED_ROWS matches (at or before the as-of bound) are scored. A question
    whose terms match at most SCORED_ROWS chunks in all is scored on every term (LoCoMo, any
    workspace of ordinary size)."""
    conds, rparams = _rowid_range("rowid", None, bound)
    rowids = "".join(f" AND {x}" for x in conds)
    counted = sorted((n, quote(part)) for part, n in freqs.items() if n)
    if not counted:
        return "", None
    if counted[0][0] > SCORED_ROWS:
        row = conn.execute(f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?{rowids}"
                           " ORDER BY rowid DESC LIMIT 1 OFFSET ?", [counted[0][1], *rparams, SCORED_ROWS - 1]).fetchone()
        return counted[0][1], (int(row[0]) if row else None)
    keep: list[str] = []
    left = SCORED_ROWS
    for n, phrase in counted:
        if n > left:
            break
        keep.append(phrase)
        left -= n
    dropped = [phrase for _, phrase in counted[len(keep):]]
    for i in range(len(dropped) - 1):
        if not left:
            break
        clause = f"({dropped[i]} AND ({' OR '.join(dropped[i + 1:])}))"
        n = _count(conn, clause, rowids, rparams, left + 1)
        if n <= left:
            keep.append(clause)
            left -= n
    return " OR ".join(keep), None


def newest(conn: sqlite3.Connection, where: Where, limit: int) -> list[sqlite3.Row]:
    """The newest `limit` chunks that pass `where` (a query without words)."""
    sql = f"SELECT {COLS_ALL} FROM chunks c WHERE {where.sql()} ORDER BY c.id DESC LIMIT ?"
    return conn.execute(sql, [*where.params, limit]).fetchall()


def ranked(conn: sqlite3.Connection, match: str, where: Where, limit: int, low: int | None,
           bound: int | None) -> list[Scored]:
    """The best `limit` committed chunks by bm25 that pass `where`, best first, with their scores.

    FTS5 ranks on its own first (no join: half the cost per matching row at 1M lines), then
    the filters are applied to its top rows. That is exact whenever at least `limit` of them
    pass: the survivors of a ranked list are the top of the filtered ranking. Otherwise (a
    selective filter, or history superseded many matches) the filtered join answers instead."""
    conds, rparams = _rowid_range("rowid", low, bound)
    rowids = "".join(f" AND {x}" for x in conds)
    want = limit + limit // 8 + 20  # room for rows the filters drop (closed versions, other kinds)
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    # One statement: FTS5's top rows (a co-routine, read in its order) each joined to its chunk
    # row where that passes the filters (NULLs where not). Reading the ~700 rows by `id IN (...)`
    # in a second statement cost ~40% more at 1M lines (binding the ids, sorting them again).
    cur = conn.cursor()
    cur.row_factory = None
    # Read until `limit` rows have passed: the rows after those are never used, so their chunk
    # rows are not looked up (bm25 has ranked all of them by then either way).
    got: list[Scored] = []
    seen = 0
    try:
        for r in cur.execute(
                f"SELECT {COLS_RANK}, t.score FROM (SELECT rowid AS id, bm25(chunks_fts, {w}) AS score FROM chunks_fts"
                f" WHERE chunks_fts MATCH ?{rowids} ORDER BY 2 LIMIT ?) t LEFT JOIN chunks c ON c.id = t.id{where.tail()}",
                [match, *rparams, want, *where.params]):
            seen += 1
            if r[ID] is not None:
                got.append((r[:-1], -r[-1]))
                if len(got) == limit:
                    break
    except sqlite3.OperationalError as exc:
        raise _bad_query(match, exc) from None
    finally:
        cur.close()
    if not seen:
        return []
    if len(got) >= limit or seen < want:
        return got
    crow, cparams = _rowid_range("c.id", low, bound)
    rows, scores = _search_join(conn, "chunks", match, Where((*where.conds, *crow), (*where.params, *cparams)), limit)
    exact: list[Scored] = [(r, scores[r["id"]]) for r in rows]
    return exact


def overlay(conn: sqlite3.Connection, match: str, where: Where, limit: int) -> tuple[list[sqlite3.Row], dict[int, float]]:
    """The best `limit` uncommitted chunks (the working-tree overlay) by bm25 that pass `where`."""
    return _search_join(conn, "wt_chunks", match, where, limit)


def _search_join(conn: sqlite3.Connection, table: str, match: str, where: Where,
                limit: int) -> tuple[list[sqlite3.Row], dict[int, float]]:
    """bm25 over the filtered join of an FTS table and its chunks (`chunks` for the exact
    fallback, `wt_chunks` for the working-tree overlay)."""
    cols = COLS_ALL if table == "chunks" else COLS
    fts = "chunks_fts" if table == "chunks" else "wt_fts"
    cond = where.sql()
    if not match:
        sql = f"SELECT {cols} FROM {table} c WHERE {cond} ORDER BY c.id DESC LIMIT ?"
        return conn.execute(sql, [*where.params, limit]).fetchall(), {}
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    sql = (f"SELECT {cols}, bm25({fts}, {w}) AS rank FROM {fts} JOIN {table} c ON c.id = {fts}.rowid"
           f" WHERE {fts} MATCH ? AND {cond} ORDER BY rank LIMIT ?")
    try:
        rows = conn.execute(sql, [match, *where.params, limit]).fetchall()
    except sqlite3.OperationalError as exc:
        raise _bad_query(match, exc) from None
    return rows, {r["id"]: -float(r["rank"]) for r in rows}
