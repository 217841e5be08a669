"""The read path: a recall session over the index, and lexical/temporal/entity search.

Ranking (measured on LoCoMo with bench/recall.py; numbers are evidence recall over categories 1-4,
R@10 / at a 1000-token budget; see bench/RESULTS.md "Recall quality"):
- bm25 over the FTS5 columns with weights CONTENT 1.0, HEADING 0.3, PATH 0.2, ENTITIES 2.0: the
  text itself carries the answer; an @mention of the entity asked about is strong evidence;
  headings and file names help only a little (every daily log shares them).
  bm25 with the entity and fact boosts below and 40 candidates: 0.613 / 0.669 (the plain
  per-turn FTS5 floor: 0.603 / 0.665).
- the best `max(CANDIDATES_PER_K * k, MIN_CANDIDATES)` bm25 hits are re-scored in Python:
  x ENTITY_BOOST when the chunk mentions an entity named in the question, x FACT_BOOST for typed
  Retain facts (curated, narrative, self-contained), x (0.5 + coverage) ** COVERAGE_POWER where
  coverage is the share of the question's terms (crudely stemmed) the chunk contains: bm25 lets one
  rare term outweigh several matched ones, and a chunk answering the whole question should win
  close calls (+0.01 R@10, +0.005 at 1000 tokens).
- neighbour smoothing: a chunk gains NEIGHBOUR_WEIGHTS[d-1] x the best score of a candidate d lines
  away in the same file (d = 1..4). Lines written next to each other are about the same thing:
  the answer is often the line after the one that repeats the question's words ("did you go?" /
  "yes, last Friday"). The big one: with 600 candidates 0.613 -> 0.706 R@10, 0.669 -> 0.772 at
  1000 tokens; the 4th weight (0.125) adds +0.002 / +0.005. It only sees neighbours inside the
  candidate pool, so the pool matters: MIN_CANDIDATES 150 / 300 / 600 give 0.693 / 0.714 / 0.724
  R@10 and 0.737 / 0.764 / 0.777 at 1000 tokens (1000 or 3000: no further change on LoCoMo, where
  600 already holds nearly every matching turn). Only returned candidates become result dicts, so
  600 costs ~1.5 ms of row fetching (only the columns ranking reads) and ~1.5 ms of reranking
  per query at 1M lines.
- cost bound (SCORED_ROWS, see Session._match_plan): FTS5 computes bm25 for every matching row
  (~1.2 us each), so at most SCORED_ROWS rows are scored: the rarest terms first; past that, the
  newest matches. Never triggers below SCORED_ROWS chunks (LoCoMo and LongMemEval: no change).
  5000 -> 3000 took ~3 ms off a 1M-line question (p95 ~21 -> ~17 ms): at that size the cap
  decides how many of the newest mentions of a common name are scored, not whether one is found.
- query terms of one character (the "s" of "Caroline's") are dropped in query.py: no measurable
  recall change, but such terms match most chunks and slow OR queries down.
Tried and not kept: dividing the score by the result's token cost (-0.01 to -0.04 at every
budget; by cost ** 0.15 / 0.3 / 0.5: 0 / -0.002 / -0.011); summing instead of maxing the
neighbours (-0.005); neighbour weight 1.0 (-0.01); returning +-1/+-2 neighbouring lines with each
result (+0.002 / -0.001 at 1000 tokens); adding the non-matching lines next to the 10-100 best
candidates as candidates of their own (-0.002); IDF-weighted term coverage (-0.002, or +0.003
with COVERAGE_POWER 1.5: noise); weighting the line above differently from the line below
(x0.6 / x0.8 / x1.3 for below: -0.002 / -0.004 / -0.007).

Nothing here writes history: the only writes are the catch-up indexing and the working-tree overlay.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from gitmem.errors import BadQuery, GitmemError, IndexLocked
from gitmem.index.db import get_meta, open_index, target_commit
from gitmem.index.worktree import refresh
from gitmem.layout import citation
from gitmem.parse import entity_key
from gitmem.recall.query import Query, build, quote as _quote
from gitmem.timeline import git
from gitmem.timeline.when import Point, parse_time, position_at, resolve_point
from gitmem.workspace import Workspace

BM25_WEIGHTS = (1.0, 0.3, 0.2, 2.0)  # content, heading, path, entities
CANDIDATES_PER_K = 4
MIN_CANDIDATES = 600
SCORED_ROWS = 3000  # most rows bm25 scores for one question (see Session._match_plan)
MIN_RESULT_TOKENS = 6  # no rendered result line costs less (see _least_tokens)
ENTITY_BOOST = 1.5
FACT_BOOST = 1.15
COVERAGE_POWER = 1.0
NEIGHBOUR_WEIGHTS = (0.5, 0.5, 0.25, 0.125)  # for candidates 1, 2, 3, 4 lines away
KINDS = ("world", "experience", "opinion", "observation", "note")
KIND_ALIASES = {"w": "world", "b": "experience", "o": "opinion", "s": "observation", "bio": "experience",
                "biographical": "experience", "summary": "observation"}

_COLS = ("c.id, c.path, c.start_line, c.end_line, c.heading, c.kind, c.fact, c.entities, c.confidence,"
         " c.event_start, c.event_end, c.content")
_COLS_ALL = _COLS + ", c.valid_from, c.valid_to, c.successor"
_NAMES_ALL = tuple(c.strip()[2:] for c in _COLS_ALL.split(","))
# Candidates are ranked as plain tuples (or Rows) in _COLS order: cheaper than Rows by name.
_ID, _PATH, _START, _END, _KIND, _FACT, _ENTITIES, _CONTENT = 0, 1, 2, 3, 5, 6, 7, 11
# The ranked candidates carry only what ranking reads, in the same positions (NULL elsewhere):
# building ~700 full rows per question cost ~1 ms at 1M lines; the few returned are re-read whole.
_COLS_RANK = ", ".join(
    c if i in (_ID, _PATH, _START, _END, _FACT, _ENTITIES, _CONTENT) else "NULL" for i, c in enumerate(_COLS_ALL.split(", "))
)


def iso(ts: int | None, tz: str | None = None) -> str | None:
    """Unix time as ISO 8601, in the commit's own timezone offset (e.g. "+0100") when known."""
    if ts is None:
        return None
    if tz and len(tz) == 5 and tz[0] in "+-" and tz[1:].isdigit():
        sign = 1 if tz[0] == "+" else -1
        from datetime import timedelta

        zone = timezone(sign * timedelta(hours=int(tz[1:3]), minutes=int(tz[3:5])))
        return datetime.fromtimestamp(ts, zone).isoformat()
    return datetime.fromtimestamp(ts, timezone.utc).isoformat()


def _covered(low: str, stems: set[str]) -> int:
    """How many stems start a word of `low` ("part" is not in "apartment": +0.001 on LoCoMo at
    1000 tokens and at R@10 over any-substring). str.find runs at C speed; the loop only steps
    past the rare occurrences inside a word. A regex scan of every candidate cost 3x more."""
    n = 0
    for st in stems:
        i = low.find(st)
        while i > 0 and low[i - 1].isalnum():
            i = low.find(st, i + 1)
        n += i >= 0
    return n


def estimate_tokens(text: str) -> int:
    """~4 characters per token: good enough to pack a budget without a tokenizer on the read path."""
    return len(text) // 4 + 1


@dataclass
class Options:
    k: int = 10
    as_of: str | None = None
    since: str | None = None
    until: str | None = None
    during: str | None = None
    kinds: tuple[str, ...] = ()
    entity: str | None = None
    include_history: bool = False
    raw: bool = False
    budget: int = 0


@dataclass
class Answer:
    query: str
    results: list[dict[str, Any]]
    index: dict[str, Any]
    as_of: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "as_of": self.as_of, "index": self.index, "notes": self.notes,
                "results": self.results}


def options_for(ws: Workspace, *, k: int | None = None, budget: int | None = None, **kw: Any) -> Options:
    """Options with the workspace's configured defaults for k and budget (CLI and MCP share this)."""
    from gitmem.config import load_config

    cfg = load_config(ws).recall
    kw["kinds"] = tuple(kw.get("kinds") or ())
    return Options(k=k or cfg.k, budget=cfg.budget if budget is None else budget, **kw)


def normalize_kinds(kinds: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for k in kinds:
        k2 = KIND_ALIASES.get(k.lower(), k.lower())
        if k2 not in KINDS:
            raise GitmemError(f"unknown kind {k!r}", f"use one of: {', '.join(KINDS)}")
        out.append(k2)
    return tuple(out)


class Session:
    """An open, caught-up index for one workspace. Cheap to create; reuse it for several queries."""

    def __init__(self, ws: Workspace, *, catch_up: bool = True) -> None:
        self.ws = ws
        self.notes: list[str] = []
        # Started first (or taken from the CLI, which starts it before its imports) so the
        # working tree's lstat calls overlap with the work below.
        self._status: git.Status | None = git.Status.take(ws.root) if catch_up else None
        self.head = target_commit(ws)
        self.conn, note = open_index(ws)
        if note:
            self.notes.append(note)
        self.tip = get_meta(self.conn, "tip")
        if catch_up and self.tip != self.head:
            self._catch_up()
            self.tip = get_meta(self.conn, "tip")
        self._overlay_ready = False

    def _catch_up(self) -> None:
        # Recall is never silently stale: index what is missing first, or say why not. The
        # indexer (and its parser) is imported only when there is something to index.
        from gitmem.index.indexer import update

        try:
            result = update(self.ws, wait=2.0)
            self.notes += result.notes
        except IndexLocked:
            self.notes.append("another indexer is running: this answer may miss the newest commits")
        except GitmemError as exc:
            self.notes.append(f"could not update the index ({exc.message}): this answer may be stale")

    def close(self) -> None:
        self.conn.close()
        if self._status is not None:
            self._status.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- timeline helpers -------------------------------------------------------------------
    def index_info(self) -> dict[str, Any]:
        return {"commit": self.tip, "head": self.head, "stale": self.tip != self.head}

    def point(self, text: str, *, end_of_day: bool = True) -> Point:
        return resolve_point(self.ws.root, text, end_of_day=end_of_day)

    def position(self, text: str, *, end_of_day: bool = True) -> tuple[int, Point]:
        pt = self.point(text, end_of_day=end_of_day)
        return position_at(self.conn, pt), pt

    def position_before(self, text: str) -> int:
        """Last position strictly before the start of WHEN (for lower bounds)."""
        pt = self.point(text, end_of_day=False)
        if pt.oid is not None:
            return position_at(self.conn, pt)  # "since REV" = after that commit
        row = self.conn.execute("SELECT max(pos) FROM commits WHERE record_time < ?", (pt.timestamp,)).fetchone()
        return int(row[0] or 0)

    def commit_at(self, pos: int) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM commits WHERE pos = ?", (pos,)).fetchone()

    def overlay(self) -> list[str]:
        """Refresh the uncommitted-edits overlay once per session; returns dirty paths."""
        if not self._overlay_ready:
            self.dirty = refresh(self.conn, self.ws, self._status)
            self._overlay_ready = True
        return self.dirty

    def known_entities(self, keys: tuple[str, ...] | list[str]) -> list[str]:
        if not keys:
            return []
        # One index probe per key: DISTINCT over `IN` would read every mention of a common entity.
        probe = "SELECT 1 FROM chunk_entities WHERE entity = ? LIMIT 1"
        return [k for k in dict.fromkeys(keys) if self.conn.execute(probe, (k,)).fetchone()]

    # -- rows to results --------------------------------------------------------------------
    def _commit_info(self, positions: set[int]) -> dict[int, sqlite3.Row]:
        if not positions:
            return {}
        marks = ",".join("?" * len(positions))
        return {r["pos"]: r for r in self.conn.execute(f"SELECT * FROM commits WHERE pos IN ({marks})", list(positions))}

    def results(self, rows: list[sqlite3.Row], scores: dict[int, float] | None = None,
                uncommitted: bool = False, at: int | None = None) -> list[dict[str, Any]]:
        commits = {} if uncommitted else self._commit_info(
            {r["valid_from"] for r in rows} | {r["valid_to"] for r in rows if r["valid_to"]}
        )
        out = []
        for r in rows:
            out.append(to_result(r, commits, scores.get(r["id"]) if scores else None, uncommitted, at))
        return out

    # -- search -----------------------------------------------------------------------------
    def search(self, text: str, opts: Options) -> Answer:
        q = build(text or "", raw=opts.raw)
        notes = list(self.notes)
        as_of_info: dict[str, Any] | None = None
        where: list[str] = []
        params: list[Any] = []
        use_overlay = opts.as_of is None and opts.until is None
        last_pos: int | None = None  # nothing recorded after this position can be returned
        if opts.as_of is not None:
            pos, pt = self.position(opts.as_of)
            last_pos = pos
            row = self.commit_at(pos)
            as_of_info = {"when": opts.as_of, "position": pos, "commit": row["oid"] if row else None,
                          "commit_time": iso(row["commit_time"], row["commit_tz"]) if row else None}
            if pos == 0:
                notes.append(f"nothing was in memory as of {opts.as_of}")
            if opts.include_history:
                where.append("c.valid_from <= ?")
                params.append(pos)
            else:
                where.append("c.valid_from <= ? AND (c.valid_to IS NULL OR c.valid_to > ?)")
                params += [pos, pos]
        elif not opts.include_history:
            where.append("c.valid_to IS NULL")
        if opts.since:
            where.append("c.valid_from > ?")
            params.append(self.position_before(opts.since))
        if opts.until:
            upos, _ = self.position(opts.until)
            last_pos = upos if last_pos is None else min(last_pos, upos)
            where.append("c.valid_from <= ?")
            params.append(upos)
        kinds = normalize_kinds(opts.kinds)
        if kinds:
            where.append(f"c.kind IN ({','.join('?' * len(kinds))})")
            params += list(kinds)
        ekey = entity_key(opts.entity) if opts.entity else None
        if opts.entity and not ekey:
            raise GitmemError(f"{opts.entity!r} is not a valid entity name", "use a name like Peter or The-Castle")
        if ekey:
            where.append("(' ' || c.entities || ' ') LIKE ?")
            params.append(f"% {ekey} %")
        if opts.during:
            start, end = self.during_window(opts.during)
            where.append("c.event_start IS NOT NULL AND c.event_start <= ? AND c.event_end >= ?")
            params += [end, start]
        if use_overlay:
            dirty = self.overlay()
            if dirty:
                where.append("c.path NOT IN (SELECT path FROM wt_files)")
        limit = max(opts.k * CANDIDATES_PER_K, MIN_CANDIDATES, opts.budget // 8)
        at = as_of_info["position"] if as_of_info else None
        # Row ids follow the timeline (migrations.py): no chunk recorded after `last_pos` has an id
        # at or below this bound, so FTS5 skips those rows instead of scoring them.
        bound = None if last_pos is None else self._id_bound(last_pos)
        freqs = self._doc_freqs(q, bound)
        cands = [Candidate(r, s) for r, s in self._candidates(q, freqs, where, params, limit, bound)]
        if use_overlay and self.dirty:
            owhere = [w for w in where if "valid_" not in w and "wt_files" not in w]
            oparams = _params_without_validity(where, params)
            orows, oscores = self._query("wt_chunks", "wt_fts", q.fts, owhere, oparams, limit)
            cands += [Candidate(r, oscores.get(r["id"]), True) for r in orows]
        ranked = self.rerank(cands, q)
        results = self._emit(ranked, opts, at)
        return Answer(query=text, results=results, index=self.index_info(), as_of=as_of_info, notes=notes)

    def _emit(self, ranked: list[Candidate], opts: Options, at: int | None) -> list[dict[str, Any]]:
        """Result dicts for the returned candidates only: the top k, or what `pack` keeps of the
        ranking for a token budget (the same choice as packing every candidate, without building a
        dict for those whose text alone cannot fit what is left of the budget)."""
        if not opts.budget:
            return self._dicts(ranked[: opts.k], at)
        out: list[dict[str, Any]] = []
        left = opts.budget
        i = 0
        while i < len(ranked) and left >= MIN_RESULT_TOKENS:
            batch: list[Candidate] = []
            while i < len(ranked) and len(batch) < 16:
                c = ranked[i]
                i += 1
                if _least_tokens(c.row) <= left:
                    batch.append(c)
            for r in self._dicts(batch, at):
                cost = estimate_tokens(render_line(r))
                if cost <= left:
                    out.append(r)
                    left -= cost
        return out

    def _dicts(self, cands: list[Candidate], at: int | None) -> list[dict[str, Any]]:
        narrow = [c.row[_ID] for c in cands if not isinstance(c.row, sqlite3.Row)]
        whole = self._chunks_by_id(_COLS_ALL, narrow) if narrow else {}
        rows = [c.row if isinstance(c.row, sqlite3.Row) else dict(zip(_NAMES_ALL, whole[c.row[_ID]])) for c in cands]
        committed = [r for r, c in zip(rows, cands) if not c.uncommitted]
        commits = self._commit_info({r["valid_from"] for r in committed} | {r["valid_to"] for r in committed if r["valid_to"]})
        return [to_result(r, {} if c.uncommitted else commits, c.score, c.uncommitted, at) for r, c in zip(rows, cands)]

    def _id_bound(self, pos: int) -> int | None:
        """The largest chunk id that can be in memory at `pos` (None: every id can)."""
        row = self.conn.execute("SELECT id FROM chunks WHERE valid_from > ? ORDER BY valid_from, id LIMIT 1",
                                (pos,)).fetchone()
        return None if row is None else int(row[0]) - 1

    def during_window(self, text: str) -> tuple[str, str]:
        """Event-time window from "2025-11", "Nov 2025", "2025-11-27", "2025-11-01..2025-11-30"."""
        from gitmem.parse import parse_event_time

        t = text.strip()
        if ".." in t:
            a, b = t.split("..", 1)
            sa, _ = self.during_window(a)
            _, eb = self.during_window(b)
            return sa, eb
        if len(t) == 7 and t[4] == "-" and t[:4].isdigit() and t[5:].isdigit():
            t = f"{t}-01"
            start, _ = parse_event_time(t, None)
            if start:
                import calendar

                y, m = int(t[:4]), int(t[5:7])
                return start, f"{y:04d}-{m:02d}-{calendar.monthrange(y, m)[1]:02d}"
        start, end = parse_event_time(t, None)
        if not start or not end:
            dt = parse_time(t, end_of_day=False)
            if dt is None:
                raise GitmemError(f"cannot read {text!r} as a date or a date range",
                                  "use 2025-11, Nov 2025, 2025-11-27 or 2025-11-01..2025-11-30")
            start = end = dt.date().isoformat()
        return start, end

    def _candidates(self, q: Query, freqs: dict[str, int], where: list[str], params: list[Any], limit: int,
                    bound: int | None) -> list[tuple[sqlite3.Row, float | None]]:
        """The best `limit` chunks by bm25 that pass the filters, best first.

        FTS5 ranks on its own first (no join: half the cost per matching row at 1M lines), then
        the filters are applied to its top rows. That is exact whenever at least `limit` of them
        pass: the survivors of a ranked list are the top of the filtered ranking. Otherwise (a
        selective filter, or history superseded many matches) the filtered join answers instead."""
        if q.empty:
            cond = " AND ".join(where) or "1"
            sql = f"SELECT {_COLS_ALL} FROM chunks c WHERE {cond} ORDER BY c.id DESC LIMIT ?"
            return [(r, None) for r in self.conn.execute(sql, [*params, limit])]
        match, low = (q.fts, None) if q.raw else self._match_plan(freqs, bound)
        if not match:
            return []
        rowids, rparams = _rowid_range("rowid", low, bound)
        rowids = "".join(f" AND {x}" for x in rowids)
        want = limit + limit // 8 + 20  # room for rows the filters drop (closed versions, other kinds)
        w = ", ".join(str(x) for x in BM25_WEIGHTS)
        try:
            ranked = self.conn.execute(
                f"SELECT rowid, bm25(chunks_fts, {w}) FROM chunks_fts WHERE chunks_fts MATCH ?{rowids}"
                " ORDER BY 2 LIMIT ?", [match, *rparams, want]).fetchall()
        except sqlite3.OperationalError as exc:
            raise _bad_query(match, exc) from None
        if not ranked:
            return []
        got = self._chunks_by_id(_COLS_RANK, [i for i, _ in ranked], where, params)
        if len(got) >= limit or len(ranked) < want:
            return [(got[i], -s) for i, s in ranked if i in got][:limit]
        crow, cparams = _rowid_range("c.id", low, bound)
        rows, scores = self._query("chunks", "chunks_fts", match, [*where, *crow], [*params, *cparams], limit)
        return [(r, scores[r["id"]]) for r in rows]

    def _chunks_by_id(
        self, cols: str, ids: list[int], where: Sequence[str] = (), params: Sequence[Any] = ()
    ) -> dict[int, tuple]:
        """Plain-tuple rows (cheaper than Rows) of the chunks `ids` that also pass `where`, by id."""
        cur = self.conn.cursor()
        cur.row_factory = None
        cond = "".join(f" AND {x}" for x in where)
        sql = f"SELECT {cols} FROM chunks c WHERE c.id IN ({','.join('?' * len(ids))}){cond}"
        return {r[_ID]: r for r in cur.execute(sql, [*ids, *params])}

    def _doc_freqs(self, q: Query, bound: int | None) -> dict[str, int]:
        """How many chunks (at or below row id `bound`) each query part matches, counted up to
        SCORED_ROWS + 1: the cost of counting stays bounded, and past that only "too many" matters."""
        conds, rparams = _rowid_range("rowid", None, bound)
        rowids = "".join(f" AND {x}" for x in conds)
        return {part: self.conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ?{rowids} LIMIT ?)",
            [_quote(part), *rparams, SCORED_ROWS + 1]).fetchone()[0] for part in q.parts}

    def _match_plan(self, freqs: dict[str, int], bound: int | None) -> tuple[str, int | None]:
        """The MATCH expression to score, and a lowest row id to score from (None: all).

        bm25 costs ~1.2 us per matching row, whatever LIMIT says, so a question of common words
        over a 1M-line memory would cost 50+ ms. Terms are taken rarest first while the rows they
        match add up to at most SCORED_ROWS; the more common terms left out still count in the
        rerank's term coverage. When even the rarest term matches more, only its newest
        SCORED_ROWS matches (at or before the as-of bound) are scored. A memory under
        SCORED_ROWS chunks is never affected (LoCoMo, any workspace of ordinary size)."""
        conds, rparams = _rowid_range("rowid", None, bound)
        rowids = "".join(f" AND {x}" for x in conds)
        counted = [(n, _quote(part)) for part, n in freqs.items() if n]
        if not counted:
            return "", None
        counted.sort()
        keep = [counted[0][1]]
        total = counted[0][0]
        for n, phrase in counted[1:]:
            if total + n > SCORED_ROWS:
                break
            keep.append(phrase)
            total += n
        if total <= SCORED_ROWS:
            return " OR ".join(keep), None
        row = self.conn.execute(f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?{rowids}"
                                " ORDER BY rowid DESC LIMIT 1 OFFSET ?", [keep[0], *rparams, SCORED_ROWS - 1]).fetchone()
        return keep[0], (int(row[0]) if row else None)

    def _query(self, table: str, fts: str, match: str, where: list[str], params: list[Any],
               limit: int) -> tuple[list[sqlite3.Row], dict[int, float]]:
        """bm25 over the filtered join of an FTS table and its chunks (the overlay, and the exact fallback)."""
        cols = _COLS_ALL if table == "chunks" else _COLS
        cond = " AND ".join(where) or "1"
        if not match:
            sql = f"SELECT {cols} FROM {table} c WHERE {cond} ORDER BY c.id DESC LIMIT ?"
            return self.conn.execute(sql, [*params, limit]).fetchall(), {}
        w = ", ".join(str(x) for x in BM25_WEIGHTS)
        sql = (f"SELECT {cols}, bm25({fts}, {w}) AS rank FROM {fts} JOIN {table} c ON c.id = {fts}.rowid"
               f" WHERE {fts} MATCH ? AND {cond} ORDER BY rank LIMIT ?")
        try:
            rows = self.conn.execute(sql, [match, *params, limit]).fetchall()
        except sqlite3.OperationalError as exc:
            raise _bad_query(match, exc) from None
        return rows, {r["id"]: -float(r["rank"]) for r in rows}

    def rerank(self, cands: list[Candidate], q: Query) -> list[Candidate]:
        """Re-score the bm25 candidates (see the module docstring for each factor and its effect)."""
        wanted = set(self.known_entities(list(q.entity_candidates)))
        # A crude prefix stem, close enough to the index's porter stemmer to tell whether a chunk
        # contains a question term ("painting" -> "paint", "painted" -> "pain"), tested as a substring.
        stems = {t[: max(4, len(t) - 3)] if len(t) > 4 else t for t in q.terms if len(t) > 1}
        base: dict[int, float] = {}
        for i, c in enumerate(cands):
            score = c.score
            if score is None:
                continue
            r = c.row
            if wanted and not wanted.isdisjoint(r[_ENTITIES].split()):
                score *= ENTITY_BOOST
            if r[_FACT]:
                score *= FACT_BOOST
            if stems:
                score *= (0.5 + _covered(r[_CONTENT].lower(), stems) / len(stems)) ** COVERAGE_POWER
            base[i] = score
        # Neighbours by line distance within one file: a range ending d lines before another's start.
        # Only files with two or more candidates can have any (at 1M lines most have one).
        by_path: dict[str, list[int]] = {}
        for i in base:
            by_path.setdefault(cands[i].row[_PATH], []).append(i)
        smoothed = dict(base)
        for group in by_path.values():
            if len(group) < 2:
                continue
            starts: dict[int, int] = {}
            ends: dict[int, int] = {}
            for i in group:
                r = cands[i].row
                starts.setdefault(r[_START], i)
                ends.setdefault(r[_END], i)
            for i in group:
                r = cands[i].row
                start, end = r[_START], r[_END]
                score = base[i]
                for d, weight in enumerate(NEIGHBOUR_WEIGHTS, 1):
                    near = [base[j] for j in (ends.get(start - d), starts.get(end + d)) if j is not None]
                    if near:
                        score += weight * max(near)
                smoothed[i] = score
        for i, score in smoothed.items():
            cands[i].score = score
        if base:
            cands.sort(key=lambda c: -(c.score or 0.0))
        return cands

@dataclass(slots=True)
class Candidate:
    """A chunk row on its way to becoming a result: ranked as a row, turned into a dict only if returned."""

    row: sqlite3.Row | tuple[Any, ...]
    score: float | None
    uncommitted: bool = False


def _least_tokens(row: sqlite3.Row) -> int:
    # A lower bound of estimate_tokens(render_line(result)): the line holds at least the content,
    # the path and " (#L1@1234567)" (the kind may be left out, see render_line).
    return (len(row[_CONTENT]) + len(row[_PATH]) + 14) // 4 + 1


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
    msg = str(exc).lower()
    if "fts5" in msg or "syntax" in msg or "no such column" in msg or "unterminated" in msg:
        return BadQuery(f"the FTS5 query {match!r} is malformed: {exc}",
                        "drop --raw to search plain words, or fix the FTS5 syntax (quote terms with double quotes)")
    return exc


def _params_without_validity(where: list[str], params: list[Any]) -> list[Any]:
    """The parameters of the filters that also apply to the overlay (kind, entity, event time)."""
    out: list[Any] = []
    i = 0
    for w in where:
        n = w.count("?")
        if "valid_" not in w and "wt_files" not in w:
            out += params[i : i + n]
        i += n
    return out


def to_result(r: sqlite3.Row | dict[str, Any], commits: dict[int, sqlite3.Row], score: float | None,
              uncommitted: bool = False, at: int | None = None) -> dict[str, Any]:
    """One result record. `at` is the as-of position: status is relative to it (a version that
    was current then is "current" in that answer, with `valid_until` saying when it later changed)."""
    keys = r.keys()
    frm = commits.get(r["valid_from"]) if "valid_from" in keys else None
    to = commits.get(r["valid_to"]) if "valid_to" in keys and r["valid_to"] else None
    oid = frm["oid"] if frm else None
    record_time = iso(frm["commit_time"], frm["commit_tz"]) if frm else None
    ended = to is not None and (at is None or r["valid_to"] <= at)
    status = "uncommitted" if uncommitted else ("current" if not ended else
                                                ("superseded" if r["successor"] else "removed"))
    res: dict[str, Any] = {
        "id": None if uncommitted else r["id"],
        "kind": r["kind"],
        "fact": bool(r["fact"]),
        "content": r["content"],
        "entities": r["entities"].split() if r["entities"] else [],
        "confidence": r["confidence"],
        "timestamp": r["event_start"] or (record_time[:10] if record_time else None),
        "event_start": r["event_start"],
        "event_end": r["event_end"],
        "record_time": record_time,
        "status": status,
        "source": citation(r["path"], r["start_line"], r["end_line"], oid),
        "path": r["path"],
        "lines": [r["start_line"], r["end_line"]],
        "heading": r["heading"],
        "commit": oid,
        "score": round(score, 4) if score is not None else None,
    }
    if to is not None:
        res["valid_until"] = {"commit": to["oid"], "time": iso(to["commit_time"], to["commit_tz"])}
        res["successor"] = r["successor"]
    return res


def render_line(r: dict[str, Any]) -> str:
    """The compact one-result form shared by the text and Markdown renderers and budget packing.

    Every token of it is paid for inside an agent's budget, so it says only what the citation
    does not: the kind unless it is a plain note, the date unless the cited file is that day's log
    (measured on LoCoMo: 0.782 -> 0.789 at 1000 tokens, more results fit)."""
    bits = [] if r["kind"] == "note" else [r["kind"]]
    if r.get("confidence") is not None:
        bits.append(f"c={r['confidence']:.2f}")
    stamp = r.get("timestamp")
    if stamp and stamp not in r["source"].split("#", 1)[0]:
        bits.append(stamp)
    head = f"[{' '.join(bits)}] " if bits else ""
    return f"{head}{r['content']} ({r['source']})"


def pack(results: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Keep the best results, in rank order, whose rendered lines fit in `budget` tokens."""
    out: list[dict[str, Any]] = []
    used = 0
    for r in results:
        cost = estimate_tokens(render_line(r))
        if used + cost > budget:
            continue
        out.append(r)
        used += cost
    return out
