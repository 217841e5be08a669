"""The read path: a recall session over the index, and the search that answers a question.

A question goes: `Options` (what the user typed) -> `store.Filter` (positions resolved, typed) ->
bm25 candidates from the index store -> `rank.rerank` (pure) -> result records
(`result.Result`), the top k or what fits a token budget. Nothing here spells SQL: the index
store owns the schema. Nothing here writes history either: the only writes are the catch-up
indexing and the working-tree overlay.
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

import re
import sqlite3
import time
from datetime import UTC, date, datetime
from typing import Any, NamedTuple, Self

from gitmem.errors import BadUsage, GitmemError, IndexLocked
from gitmem.index import rules, store
from gitmem.index.db import get_meta, map_for_reading, open_index, target_commit, unshallowed
from gitmem.index.readings import Reading, unpack
from gitmem.index.store import COLS_ALL, COLS_RANK, CONTENT, HEADING, ID, NAMES_ALL
from gitmem.index.worktree import refresh
from gitmem.parse import answers, attributes, entity_key, mood
from gitmem.parse.entities import asked_relation
from gitmem.parse.retain import Alias, retain_alias
from gitmem.recall import result as _result
from gitmem.recall.currency import (RECENCY_TOP, Asked, Currency, Settled, best_case, collapse, heirs, newer_first,
                                    newest_confidence, one_per_fact, settle)
from gitmem.recall.query import Query, build, names
from gitmem.recall import learned, semantic
from gitmem.recall.rank import (Candidate, aliased, by_speaker, covered, diversify, feedback, in_window, pool_size,
                                query_stems, rerank, speaker_of, window_holds)
from gitmem.recall.result import MIN_RESULT_TOKENS, OVER_BUDGET, Replacement, Result, excerpt, iso, least_tokens, to_result
from gitmem.recall.semantic import Dense
from gitmem.timeline import git
from gitmem.timeline.when import Point, parse_time, resolve_point
from gitmem.workspace import Workspace

STALE_RULES = ("the index's supersession links were made by an older gitmem's rules and were not derived again "
               "now: run `gitmem index` to renew them")
# A recall's catch-up derives links made by older rules again itself only for an index up to this
# many chunk versions (~5 s of CPU at the 1M-line history's rate); a larger one is left to
# `gitmem index` or the hook's background run, and the answer says so (STALE_RULES).
REDERIVE_IN_RECALL = 50_000
MAX_BUDGET = 1 << 40  # tokens: larger budgets mean "everything" (see options_for)
KINDS = ("world", "experience", "opinion", "observation", "note")
KIND_ALIASES = {"w": "world", "b": "experience", "o": "opinion", "s": "observation", "bio": "experience",
                "biographical": "experience", "summary": "observation"}


# NamedTuples, not dataclasses: see result.Result.
class Options(NamedTuple):
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
    # One answer per fact: a bank/ copy collapses into its source (currency.py). Off for the
    # views that list every place a statement is written (`opinions --history`).
    collapse: bool = True
    semantic: bool = False  # fuse the dense ranking in (semantic.py); the session's `dense` answers it


class Answer(NamedTuple):
    query: str
    results: list[Result]
    index: dict[str, Any]  # type: ignore[assignment]  # the field shadows tuple.index by design
    notes: list[str]
    as_of: dict[str, Any] | None = None
    semantic: dict[str, Any] | None = None  # semantic.Report.to_dict() when semantic recall was asked for

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the `recall` schema."""
        return {"query": self.query, "as_of": self.as_of, "index": self.index, "notes": self.notes,
                "semantic": self.semantic, "results": [r.to_json() for r in self.results]}


def options_for(ws: Workspace, *, k: int | None = None, budget: int | None = None, **kw: Any) -> Options:
    """Options with the workspace's configured defaults for k and budget (CLI and MCP share this)."""
    from gitmem.config import load_config

    cfg = load_config(ws).recall
    kw["kinds"] = tuple(kw.get("kinds") or ())
    # A budget past any memory's size packs everything; capped so SQLite can bind what is derived
    # from it (`--budget 1e23` from an agent overflowed SQLite's 64-bit integers).
    budget = min(cfg.budget if budget is None else budget, MAX_BUDGET)
    return Options(k=k or cfg.k, budget=budget, **kw)


def normalize_kinds(kinds: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for k in kinds:
        k2 = KIND_ALIASES.get(k.lower(), k.lower())
        if k2 not in KINDS:
            raise BadUsage(f"unknown kind {k!r}", f"use one of: {', '.join(KINDS)}")
        out.append(k2)
    return tuple(out)


class Session:
    """An open, caught-up index for one workspace. Cheap to create; reuse it for several queries."""

    def __init__(self, ws: Workspace, *, catch_up: bool = True, dense: Dense | None = None,
                 dense_off: str | None = None, located: git.Located | None = None) -> None:
        self.ws = ws
        self.notes: list[str] = []
        # Where semantic recall gets its dense hits (None: not available, `dense_off` says why).
        self.dense = dense
        self.dense_off = dense_off
        # Started first (or taken from the CLI, which starts it before its imports) so the
        # working tree's lstat calls overlap with the work below.
        self._status: git.Status | None = git.Status.take(ws.root) if catch_up else None
        # `located`: the workspace and HEAD as one git call read them (Workspace.find_at_head).
        self.head = target_commit(ws, located)
        self.conn, note = open_index(ws)
        map_for_reading(self.conn)
        ws.load_patterns()
        if note:
            self.notes.append(note)
        self.tip = get_meta(self.conn, "tip")
        # Links derived by older rules (an upgrade changed them: index/rules.py) are derived again
        # by the catch-up; an answer from links it could not renew says so.
        old_rules = rules.stale(self.conn)
        if catch_up and (self.tip != self.head or old_rules or unshallowed(ws, self.conn)):
            self._catch_up()
            self.tip = get_meta(self.conn, "tip")
            old_rules = old_rules and rules.stale(self.conn)
        if old_rules and self.tip is not None:
            self.notes.append(STALE_RULES)
        # The days stored with the chunks (index/dating.py) are this code's reading only when the
        # index's rules are: until `gitmem index` derives them again, the text is read at recall.
        self._days_stored = not old_rules
        self._overlay_ready = False
        self._has_links: bool | None = None

    def _catch_up(self) -> None:
        # Recall is never silently stale: index what is missing first, or say why not. The
        # indexer (and its parser) is imported only when there is something to index.
        from gitmem.index.indexer import update

        try:
            result = update(self.ws, wait=2.0, rederive_limit=REDERIVE_IN_RECALL)
            self.notes += result.notes
        except IndexLocked:
            self.notes.append("another indexer is running: this answer may miss the newest commits")
        except GitmemError as exc:
            self.notes.append(f"could not update the index ({exc.message}): this answer may be stale")

    def close(self) -> None:
        self.conn.close()
        if self._status is not None:
            self._status.close()
        self.ws.save_patterns()

    def __enter__(self) -> Self:
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
        return store.position_at(self.conn, pt), pt

    def position_before(self, text: str) -> int:
        """Last position strictly before the start of WHEN (for lower bounds)."""
        pt = self.point(text, end_of_day=False)
        if pt.oid is not None:
            return store.position_at(self.conn, pt)  # "since REV" = after that commit
        return store.position_before(self.conn, pt.timestamp)

    def commit_at(self, pos: int) -> sqlite3.Row | None:
        return store.commit_at(self.conn, pos)

    def as_of_info(self, when: str) -> dict[str, Any]:
        """The "as_of" record of an answer: WHEN, its position and the commit memory stood at."""
        return self._as_of(when)[0]

    def _as_of(self, when: str) -> tuple[dict[str, Any], Point]:
        pos, pt = self.position(when)
        row = self.commit_at(pos)
        return {"when": when, "position": pos, "commit": row["oid"] if row else None,
                "commit_time": iso(row["commit_time"], row["commit_tz"]) if row else None}, pt

    def overlay(self) -> list[str]:
        """Refresh the uncommitted-edits overlay once per session; returns dirty paths."""
        if not self._overlay_ready:
            self.dirty = refresh(self.conn, self.ws, self._status)
            self._overlay_ready = True
        return self.dirty

    def known_entities(self, keys: tuple[str, ...] | list[str]) -> list[str]:
        if not keys:
            return []
        return store.entity_known(self.conn, keys)

    # -- rows to results --------------------------------------------------------------------
    def results(self, rows: list[sqlite3.Row], scores: dict[int, float] | None = None,
                uncommitted: bool = False, at: int | None = None) -> list[Result]:
        commits = {} if uncommitted else store.commits_at(
            self.conn, {r["valid_from"] for r in rows} | {r["valid_to"] for r in rows if r["valid_to"]}
        )
        return [to_result(r, commits, scores.get(r["id"]) if scores else None, uncommitted, at) for r in rows]

    def results_by_id(self, ids: list[int]) -> list[Result]:
        """Result records of the chunks `ids`, in that order."""
        return self.results(store.rows_by_id(self.conn, ids))

    # -- search -----------------------------------------------------------------------------
    def search(self, text: str, opts: Options) -> Answer:
        q = build(text or "", raw=opts.raw)
        notes = list(self.notes)
        as_of_info: dict[str, Any] | None = None
        use_overlay = opts.as_of is None and opts.until is None
        at: int | None = None
        last_pos: int | None = None  # nothing recorded after this position can be returned
        ref: int | None = None  # the time the question is asked at (its time words count from it)
        if opts.as_of is not None:
            as_of_info, pt = self._as_of(opts.as_of)
            ref = pt.timestamp
            at = last_pos = as_of_info["position"]
            notes += self._as_of_notes(opts.as_of, at, pt)
        if opts.since and opts.until and self.point(opts.since, end_of_day=False).timestamp > \
                self.point(opts.until).timestamp:
            raise BadUsage(f"--since {opts.since} is after --until {opts.until}", "swap them")
        since = self.position_before(opts.since) if opts.since else None
        until = None
        if opts.until:
            until, _ = self.position(opts.until)
            last_pos = until if last_pos is None else min(last_pos, until)
        kinds = normalize_kinds(opts.kinds)
        ekey = entity_key(opts.entity) if opts.entity else None
        if opts.entity and not ekey:
            raise GitmemError(f"{opts.entity!r} is not a valid entity name", "use a name like Peter or The-Castle")
        during = self.during_window(opts.during) if opts.during else None
        dirty = bool(self.overlay()) if use_overlay else False
        flt = store.Filter(at=at, history=opts.include_history, since=since, until=until, kinds=kinds, entity=ekey,
                           during=during, hide_dirty=dirty)
        where, owhere = flt.compile()
        limit = pool_size(opts.k, opts.budget)
        # Row ids follow the timeline (migrations.py): no chunk recorded after `last_pos` has an id
        # at or below this bound, so FTS5 skips those rows instead of scoring them.
        bound = None if last_pos is None else store.id_bound(self.conn, last_pos)
        pending = None
        speakers: frozenset[str] = frozenset()
        if opts.semantic and not q.raw and not q.empty:
            speakers = self._speakers(text, bound)
            # Started first: the model and the vector search run while the lexical side does its work.
            pending = semantic.start(self.conn, self.dense, self.dense_off,
                                     semantic.Ask(semantic.neutral(text, speakers), limit, at,
                                                  opts.include_history, since, until))
        cands = [Candidate(r, s) for r, s in self._candidates(q, where, limit, bound)]
        q, cands = self._expand_aliases(q, cands, where, limit, bound)
        if dirty:
            orows, oscores = store.overlay(self.conn, q.fts, owhere, limit)
            cands += [Candidate(r, oscores.get(r["id"]), True) for r in orows]
        wanted = set(self.known_entities(list(q.entity_candidates)))
        ranked = feedback(diversify(rerank(cands, q, wanted)), q)
        window = question_window(text, ref) if not q.raw and q.terms else None
        if not q.raw and q.terms:
            ranked = by_speaker(ranked, names(text))
            ranked = in_window(ranked, window)
        report = None
        lexical, unread = ranked, semantic.Unread()
        if pending is not None:
            # The places k or a budget can use (a result line costs 20+ tokens), with room for
            # those that do not fit.
            head = 2 * max(opts.k, opts.budget // 20)
            speakers |= self._asker(text, bound)
            # A top k reads only the head: the dense hits far below it are fused by score and left
            # unread (semantic.hybrid), when the question's filter is the dense search's own.
            reach = _reach(opts) if flt.timeline_only else None
            ranked, report, unread = semantic.hybrid(self.conn, pending, lexical, where, head=head, speakers=speakers,
                                                     reach=reach)
            notes += [report.note] if report.note else []
        # A hybrid top k dates only the head (settle's `reach`); a lexical question dates every
        # candidate: its pool has flat scores, so the head is nearly all of it, and finding it
        # cost more than the dating it saved (~4 M instructions of a CLI recall at 1M lines).
        hybrid = pending is not None
        settled = self._currency(ranked, where, at, opts, window, unread, hybrid)
        if settled is None:  # an unread dense hit could have reached the answer: read them all
            assert pending is not None  # only hybrid leaves hits unread
            ranked, report, _ = semantic.hybrid(self.conn, pending, lexical, where, head=head, speakers=speakers)
            settled = self._currency(ranked, where, at, opts, window, head_only=True)
            assert settled is not None  # nothing is left unread
        ranked, cur = settled
        if not q.raw and q.terms and not opts.include_history:
            asked = Asked(query_stems(q), attributes.asked(text), frozenset(wanted), attributes.asks_quantity(text),
                          answers.expects(text), asked_relation(text, wanted), attributes.counted(text),
                          mood.asks_occasion(text))
            same = None
            if report is not None:  # semantic recall only: a lexical one does not import it
                from gitmem.recall import meaning

                same = meaning.same_question(self.conn, report.question, ranked[:RECENCY_TOP], self._day(opts))
            readings: dict[int, Any] = {}  # what newer_first read of each head candidate, read again by the model
            scored = ranked
            if learned.MODE != "replace":
                ranked = newer_first(ranked, asked, frozenset(cur.superseded), frozenset(cur.past), cur.pending, same,
                                     self._days_stored, readings, self._readings(ranked[:RECENCY_TOP]))
            # The learned pair model after newer_first's rules or in their place (recall/learned.py).
            ranked = learned.ahead(ranked, asked, frozenset(cur.superseded), frozenset(cur.past), cur.pending,
                                   readings=readings)
            ranked = window_holds(scored, ranked, window)
        results = self._emit(ranked, opts, at, q, cur)
        if opts.budget and not results and ranked:
            least = min(least_tokens(c.row) for c in ranked)
            notes.append(f"{OVER_BUDGET} {len(ranked)} matching result(s), none fits in --budget {opts.budget}"
                         f" tokens (the smallest needs about {least}): raise the budget")
        return Answer(query=text, results=results, index=self.index_info(), as_of=as_of_info, notes=notes,
                      semantic=report.to_dict() if report else None)

    def _readings(self, head: list[Candidate]) -> dict[int, Reading] | None:
        """The readings the index stored of the head's committed rows (index/readings.py), by id;
        None while they are older rules' (as `_days_stored`): the text is read then."""
        if not self._days_stored:
            return None
        ids = [c.row[ID] for c in head if not c.uncommitted]
        return {i: unpack(cols) for i, cols in store.readings(self.conn, ids).items()} if ids else {}

    def _speakers(self, text: str, bound: int | None) -> frozenset[str]:
        """The names in the question ("Caroline", "Caroline's") that speak in memory: some chunk
        in memory by `bound` is a turn of theirs ("Caroline: ..."). One FTS5 initial-token query
        per name."""
        out = set()
        for name in names(text):
            name = re.split(r"['’]", name, maxsplit=1)[0]
            if name and self._speaks(name, bound):
                out.add(name)
        return frozenset(out)

    def _asker(self, text: str, bound: int | None) -> frozenset[str]:
        """The asker's speaker label (semantic.ASKER) when the question is in the first person and
        the asker speaks in memory by `bound` ("user: ..."); else nothing. Credited like a named
        speaker, never neutralised: "I" is not a name."""
        asker = semantic.ASKER
        if asker and semantic.first_person(text) and self._speaks(asker, bound):
            return frozenset({asker})
        return frozenset()

    def _speaks(self, name: str, bound: int | None) -> bool:
        """Whether some chunk in memory by `bound` is a turn of `name`'s ("name: ...")."""
        return any(speaker_of(c) == name for c in store.opening(self.conn, name, bound))

    def _expand_aliases(self, q: Query, cands: list[Candidate], where: store.Where, limit: int,
                        bound: int | None) -> tuple[Query, list[Candidate]]:
        """When the question calls someone by an alias their entity page lists ("Mel"), ask again
        with their name added (and @mentions of them boosted): the memory may never use the alias."""
        if q.raw or not q.terms:
            return q, cands
        found = aliased(cands, q, self._alias_bullets(cands))
        if not found:
            return q, cands
        q2 = build(" ".join([q.text, *found]))
        return q2, [Candidate(r, s) for r, s in self._candidates(q2, where, limit, bound)]

    def _alias_bullets(self, cands: list[Candidate]) -> dict[int, Alias]:
        """The candidates that are alias bullets (`- alias: @Robert = Bob`) of a Retain section, by
        id. The content says "alias:"; only those few rows are looked up for their heading, since
        the same line outside a Retain section is a note like any other."""
        maybe = {c.row[ID]: c.row[CONTENT] for c in cands if not c.uncommitted and c.row[CONTENT][:5].lower() == "alias"}
        if not maybe:
            return {}
        rows = store.tuples_by_id(self.conn, COLS_ALL, list(maybe))
        found = {i: retain_alias((rows[i][HEADING] or "").split(" > "), content) for i, content in maybe.items() if i in rows}
        return {i: a for i, a in found.items() if a is not None}

    def _candidates(self, q: Query, where: store.Where, limit: int,
                    bound: int | None) -> list[store.Scored]:
        """The best `limit` committed chunks by bm25 that pass the filters, best first."""
        freqs = store.doc_freqs(self.conn, q.parts, bound)
        if q.empty:
            return [(r, None) for r in store.newest(self.conn, where, limit)]
        match, low = (q.fts, None) if q.raw else store.match_plan(self.conn, freqs, bound)
        if not match:
            return []
        return store.ranked(self.conn, match, where, limit, low, bound)

    def _currency(self, ranked: list[Candidate], where: store.Where, at: int | None, opts: Options,
                  window: tuple[date, date] | None, unread: semantic.Unread | None = None,
                  head_only: bool = False) -> tuple[list[Candidate], Currency] | None:
        """Copies collapsed, replaced statements left out, time-bounded ones dated (currency.py).
        Only the head of the ranking is looked up: what k or the budget can reach, with room for
        the candidates this leaves out; with `head_only` (a hybrid top k) only the head is dated.
        None when a dense hit left `unread` could have taken a place the answer reads (or stands
        in for one: a statement's heir, a copy's original)."""
        day = self._day(opts)
        links: dict[int, store.Link] = {}
        fetched: dict[int, Any] = {}
        copies: dict[int, list[int]] = {}
        if self._has_links is None:
            self._has_links = store.has_links(self.conn)
        n = _head(opts)
        if self._has_links:
            head = ranked[:n]
            ids = [c.row[ID] for c in head if not c.uncommitted]
            originals = store.originals_of(self.conn, ids) if opts.collapse else {}
            alone: dict[int, int] = {}
            if originals:
                missing = list(set(originals.values()).difference(ids))
                found = store.tuples_by_id(self.conn, COLS_RANK, missing, where) if missing else {}
                head, copies, alone = collapse(head, originals, found)
            ids = [c.row[ID] for c in head if not c.uncommitted]
            links = store.superseded_by(self.conn, ids + list(alone.values()), at)
            # A curated opinion is replaced when the statement it curates is.
            links.update({i: links[o] for i, o in alone.items() if o in links})
            missing = heirs(links, set(ids))
            if missing:
                fetched = store.tuples_by_id(self.conn, COLS_RANK, missing, where)
                links.update(store.superseded_by(self.conn, list(fetched), at))
            for o, more in store.copies_in_memory(self.conn, ids, where).items():
                copies[o] = sorted(set(copies.get(o, [])) | set(more))
            # An original fetched for a copy in the head may also rank below it: it is one answer.
            placed = {c.row[ID] for c in head if not c.uncommitted}
            ranked = head + [c for c in ranked[n:] if c.uncommitted or c.row[ID] not in placed]
        # `head_only`: the top k reads only the head (one_per_fact's, then newer_first's
        # RECENCY_TOP): settle dates only what can reach it. A budget may read any depth:
        # everything is dated.
        scores = [c.score for c in ranked]
        done = settle(ranked, links, fetched, day, opts.include_history, _reach(opts) if head_only else None,
                      self._days_stored, window)
        bound, left = (unread.bound, unread.ids) if unread is not None else (None, frozenset())
        if bound is not None and (done.least is None or best_case(bound) >= done.least
                                  or not left.isdisjoint(fetched) or not left.isdisjoint(copies)):
            return None
        out, copied = _one_each(done, copies, opts)
        if out is None and bound is not None:  # the answer reads past settle's exact places: read every hit
            return None
        if out is None:  # rare (many copies near the top): the head read reached past settle's exact places
            for c, s in zip(ranked, scores):
                c.score = s
            done = settle(ranked, links, fetched, day, opts.include_history, stored=self._days_stored, window=window)
            out, copied = _one_each(done, copies, opts)
            assert out is not None  # every place is exact
        return out, Currency(links, {o: [i for i in more if i != o] for o, more in copied.items()}, done.past,
                             done.waiting)

    def _day(self, opts: Options) -> str:
        """The day the question is asked on (its as-of day, else today), ISO."""
        if opts.as_of is not None:
            return datetime.fromtimestamp(self.point(opts.as_of).timestamp, UTC).date().isoformat()
        return datetime.now(UTC).date().isoformat()

    def _as_of_notes(self, when: str, pos: int, pt: Point) -> list[str]:
        """Say plainly when WHEN is outside the indexed history (before its first commit, or
        after its newest one) instead of answering silently from an edge of it."""
        def day(row: sqlite3.Row | None) -> str:
            return (iso(row["commit_time"], row["commit_tz"]) or "")[:10] if row is not None else "?"

        if pos == 0:
            first = self.commit_at(1)
            since = f" (the first commit is from {day(first)})" if first is not None else ""
            return [f"nothing was in memory as of {when}: that is before the first commit{since}"]
        # The start of WHEN (a date means its whole day): "2025-11-01" on the newest commit's day is inside.
        newest_pos, newest_time = store.last_commit_time(self.conn)
        if (pt.oid is None and pos == newest_pos and newest_time is not None
                and self.point(when, end_of_day=False).timestamp > newest_time):
            return [f"{when} is after the newest commit ({day(self.commit_at(pos))}):"
                    " answering from memory as it stands at that commit"]
        return []

    def _emit(self, ranked: list[Candidate], opts: Options, at: int | None, q: Query,
              cur: Currency | None = None) -> list[Result]:
        """Results for the returned candidates only: the top k, or what `pack` keeps of the
        ranking for a token budget (the same choice as packing every candidate, without building a
        result for those whose text alone cannot fit what is left of the budget). Under a budget a
        long text is cut to an excerpt around its best match (see `shorten`)."""
        if not opts.budget:
            return self._records(ranked[: opts.k], at, cur)
        stems = query_stems(q)
        out: list[Result] = []
        left = opts.budget
        i = 0
        while i < len(ranked) and left >= MIN_RESULT_TOKENS:
            batch: list[Candidate] = []
            while i < len(ranked) and len(batch) < 16:
                c = ranked[i]
                i += 1
                if least_tokens(c.row) <= left:
                    batch.append(c)
            for r in self._records(batch, at, cur):
                r = shorten(r, stems)
                cost = r.tokens()
                if cost <= left:
                    out.append(r)
                    left -= cost
        return out

    def _records(self, cands: list[Candidate], at: int | None, cur: Currency | None = None) -> list[Result]:
        narrow = [c.row[ID] for c in cands if not isinstance(c.row, sqlite3.Row)]
        whole = store.tuples_by_id(self.conn, COLS_ALL, narrow) if narrow else {}
        rows = [c.row if isinstance(c.row, sqlite3.Row) else dict(zip(NAMES_ALL, whole[c.row[ID]])) for c in cands]
        committed = [r for r, c in zip(rows, cands) if not c.uncommitted]
        commits = store.commits_at(
            self.conn, {r["valid_from"] for r in committed} | {r["valid_to"] for r in committed if r["valid_to"]})
        out = [to_result(r, {} if c.uncommitted else commits, c.score, c.uncommitted, at)
               for r, c in zip(rows, cands)]
        return self._annotate(out, cur) if cur is not None else out

    def _annotate(self, results: list[Result], cur: Currency) -> list[Result]:
        """Say what currency decided on each result: what replaced it, where else it is copied,
        whether its time window is over (fields of the result schema, rendered by Result.line)."""
        ids = [r.id for r in results if r.id is not None]
        cite_ids = sorted({cur.superseded[i].new for i in ids if i in cur.superseded}
                          | {k for i in ids for k in cur.copies.get(i, ())})
        cited = {r.id: r for r in self.results_by_id(cite_ids)} if cite_ids else {}
        cites = {i: r.source for i, r in cited.items()}
        out: list[Result] = []
        for r in results:
            i = r.id
            link = cur.superseded.get(i) if i is not None else None
            mine = [cited[k] for k in cur.copies.get(i, ()) if k in cited] if i is not None else []
            curated = newest_confidence(i, [(c.id, c.path, c.content, c.confidence) for c in mine if c.id is not None]) \
                if i is not None else None
            out.append(r._replace(
                marked=True,
                confidence=r.confidence if curated is None else curated,
                superseded_by=Replacement(link.new, cites.get(link.new), link.reason) if link is not None else None,
                copies=tuple(cites[k] for k in cur.copies.get(i, ()) if k in cites) if i is not None else (),
                past=i is not None and i in cur.past))
        return out

    def during_window(self, text: str) -> tuple[str, str]:
        """Event-time window from "2025-11", "Nov 2025", "2025-11-27", "2025-11-01..2025-11-30"."""
        from gitmem.parse import parse_event_time

        t = text.strip()
        if ".." in t:
            a, b = t.split("..", 1)
            sa, _ = self.during_window(a)
            _, eb = self.during_window(b)
            if sa > eb:
                raise BadUsage(f"--during {text!r} ends before it starts", f"write it the other way round: {b}..{a}")
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


def _head(opts: Options) -> int:
    """The candidates currency looks up (copies, replacements): what k or the budget can reach,
    with room for those it leaves out."""
    return max(opts.k * 4, 64, opts.budget // 8)


def _reach(opts: Options) -> int | None:
    """The places a top-k answer reads of the settled ranking (None: a budget may read any depth):
    currency's head, at least the 2 x RECENCY_TOP that settle's `waiting` reads."""
    return None if opts.budget else max(_head(opts), 2 * RECENCY_TOP)


def _one_each(done: Settled, copies: dict[int, list[int]],
              opts: Options) -> tuple[list[Candidate] | None, dict[int, list[int]]]:
    """The settled candidates with each fact once (one_per_fact, and copies listed under their
    original), and every copy found (original id -> copy ids, `copies` and one_per_fact's).
    None when the places the answer reads (one_per_fact's walk, then the first max(k,
    RECENCY_TOP) kept) are not all among settle's exact ones: settle everything instead."""
    copies = {o: list(more) for o, more in copies.items()}
    need = 2 * max(opts.k, opts.budget // 10) + 8  # k results or a budget's worth of short lines, with room
    ranked, same = one_per_fact(done.cands, need) if opts.collapse else (done.cands, {})
    # one_per_fact drops only what it looks at, so it looked at `need` plus what it dropped.
    walked = min(len(done.cands), need + len(done.cands) - len(ranked)) if opts.collapse else 0
    for o, more in same.items():
        copies[o] = sorted(set(copies.pop(o, [])) | set(more) | {i for m in more for i in copies.pop(m, [])})
    # A copy found only through its original (it ranked below the head, or was linked after
    # the head was collapsed) is listed under the original: it is not a second answer.
    kept = {c.row[ID] for c in ranked if not c.uncommitted}
    listed = {i for o, more in copies.items() if o in kept for i in more if i != o} if opts.collapse else set()
    if listed:
        ranked = [c for c in ranked if c.uncommitted or c.row[ID] not in listed]
    if done.exact < len(done.cands):
        exact = {id(c) for c in done.cands[:done.exact]}
        if walked > done.exact or not all(id(c) in exact for c in ranked[:max(opts.k, RECENCY_TOP)]):
            return None, copies
    return ranked, copies


def shorten(r: Result, stems: set[str]) -> Result:
    """A long result with its content cut to an excerpt around its best match
    (result.SNIPPET_CHARS), marked `excerpt: true`; its citation still names the whole chunk,
    which holds the excerpt."""
    limit = _result.SNIPPET_CHARS
    if not limit:
        return r
    cut = excerpt(r.content, lambda low: covered(low, stems), limit)
    if cut is not None and cut != r.content:
        return r._replace(content=cut, excerpt=True)
    return r


def question_window(text: str, ref: int | None) -> tuple[date, date] | None:
    """The days the question's time words name, counted from `ref` (unix time; None: now)."""
    from gitmem.parse.timewords import time_window

    day = datetime.fromtimestamp(ref if ref is not None else time.time(), UTC).date()
    return time_window(text, day)
