"""Re-scoring the bm25 candidates: a pure function of the candidates and the question.

What each factor does, with the LoCoMo number that keeps it (evidence recall over categories 1-4,
bench/recall.py; the full lab notebook, with what was tried and dropped, is bench/recall_notes.md):
- ENTITY_BOOST: x1.5 when the chunk mentions an entity named in the question.
- FACT_BOOST: x1.15 for typed Retain facts (curated, narrative, self-contained).
- COVERAGE_POWER: x (0.5 + coverage) ** 1.0, coverage = the share of the question's terms (crudely
  stemmed) the chunk contains, so a chunk answering the whole question wins close calls over one
  rare-term hit (+0.01 R@10).
- NEIGHBOUR_WEIGHTS: a chunk gains w[d-1] x the best score of a candidate d lines away in the same
  file: the answer is often the line after the one that repeats the question's words
  (0.613 -> 0.706 R@10 with 600 candidates).
- NEIGHBOUR_COST_POWER (issue 16): that credit is scaled by min(1, cost of the match / cost of the
  chunk it lifts), so a long assistant reply cannot ride into a budget on a short question's score
  (LongMemEval haystack at 2000 tokens, with excerpts: 0.897 -> 0.920 on the report half).
- TIME_BOOST (issue 16): x1.5 for a chunk dated inside the window the question's time words name
  ("last week", "in May": parse/timewords.py), counted from the as-of point; never a filter.
  WINDOW_HOLDS: recency (currency.newer_first, learned.ahead) never carries a line dated outside
  that window above one inside it that ranked above it (`window_holds`): a question that names a
  time is not asking for the newest fact.
- SPEAKER_BOOST (issue 16, round 2): x1.3 for a turn spoken by someone the question names
  ("Caroline: ..." for "What did Caroline paint?"). With 200-character excerpts, LoCoMo at 1000
  tokens tune 0.813 -> 0.831, validation 0.797 -> 0.807 (2000: +0.004 / +0.008); the haystack's
  turns are "user:" / "assistant:", so it cannot act there (unchanged to the third decimal).
- FILE_DECAY and PRF_WEIGHT: measured and left off (bench/RESULTS.md, "ranking variants").
- MIN_CANDIDATES / CANDIDATES_PER_K: the pool the rerank sees, max(4k, 600): neighbours only count
  inside the pool (150 / 300 / 600: 0.693 / 0.714 / 0.724 R@10).
"""

from __future__ import annotations

import math
import sqlite3
from typing import Any

from datetime import date

from gitmem.index.store import CONTENT, END, ENTITIES, EVENT_START, FACT, ID, PATH, START
from gitmem.layout import entity_page_stem, log_date
from gitmem.parse.retain import Alias
from gitmem.recall.query import STOPWORDS, Query, parse_aliases
from gitmem.lazyre import lazy

CANDIDATES_PER_K = 4
MIN_CANDIDATES = 600
ENTITY_BOOST = 1.5
FACT_BOOST = 1.15
COVERAGE_POWER = 1.0
NEIGHBOUR_WEIGHTS = (0.5, 0.5, 0.25, 0.125)  # for candidates 1, 2, 3, 4 lines away
# Cost-aware neighbour credit: a neighbour's credit is scaled by min(1, cost of the match /
# cost of the chunk it lifts) ** NEIGHBOUR_COST_POWER, cost = characters + NEIGHBOUR_COST_SLACK,
# so a long turn cannot ride into a budget on a short line's score (0: off).
NEIGHBOUR_COST_POWER = 1.0
NEIGHBOUR_COST_SLACK = 200
# Diversity: the n-th best candidate of one file is scaled by FILE_DECAY ** (n - 1) (1.0: off).
FILE_DECAY = 1.0
# A turn spoken by someone the question names by name ("Caroline: ...") is scaled by SPEAKER_BOOST
# (1.0: off).
SPEAKER_BOOST = 1.3
# Time words in the question: chunks dated inside the window they name are scaled by TIME_BOOST.
TIME_BOOST = 1.5
# Recency never carries a line outside the question's time window over one inside it (`window_holds`; False: off).
WINDOW_HOLDS = True
# Pseudo-relevance feedback (RM3-like, inside the candidate pool; 0: off): the PRF_TERMS words most
# typical of the PRF_DOCS best candidates (weighted by their scores, rare in the pool) lift every
# candidate that holds them by up to x(1 + PRF_WEIGHT).
PRF_WEIGHT = 0.0
PRF_DOCS = 10
PRF_TERMS = 10


class Candidate:
    """A chunk row on its way to becoming a result: ranked as a row, turned into a dict only if returned.

    A plain class, not a dataclass (see recall/result.py); not a NamedTuple: ranking moves `score`."""

    __slots__ = ("row", "score", "uncommitted")

    def __init__(self, row: sqlite3.Row | tuple[Any, ...], score: float | None, uncommitted: bool = False) -> None:
        self.row = row
        self.score = score
        self.uncommitted = uncommitted

    def __repr__(self) -> str:
        return f"Candidate(row={self.row!r}, score={self.score!r}, uncommitted={self.uncommitted!r})"


def pool_size(k: int, budget: int) -> int:
    """How many bm25 candidates the rerank sees."""
    return max(k * CANDIDATES_PER_K, MIN_CANDIDATES, budget // 8)


def covered(low: str, stems: set[str]) -> int:
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


def query_stems(q: Query) -> set[str]:
    """A crude prefix stem of each question term, close enough to the index's porter stemmer to
    tell whether a text contains it ("painting" -> "paint", "painted" -> "pain"), tested with
    `covered`."""
    return {t[: max(4, len(t) - 3)] if len(t) > 4 else t for t in q.terms if len(t) > 1}


def rerank(cands: list[Candidate], q: Query, wanted: set[str]) -> list[Candidate]:
    """Re-score the bm25 candidates in place and sort them best first. `wanted`: the entity keys
    named in the question that memory knows (see the module docstring for each factor)."""
    stems = query_stems(q)
    n_stems = len(stems)
    base: dict[int, float] = {}
    # Neighbours by line distance within one file: a range ending d lines before another's start.
    # Only files with two or more candidates can have any (at 1M lines most have one). Grouped in
    # the same pass, and each score set at once: only a neighbour's changes, from `base`.
    by_path: dict[str, list[int]] = {}
    for i, c in enumerate(cands):
        score = c.score
        if score is None:
            continue
        r = c.row
        if wanted and not wanted.isdisjoint(r[ENTITIES].split()):
            score *= ENTITY_BOOST
        if r[FACT]:
            score *= FACT_BOOST
        if n_stems:
            score *= (0.5 + covered(r[CONTENT].lower(), stems) / n_stems) ** COVERAGE_POWER
        base[i] = c.score = score
        by_path.setdefault(r[PATH], []).append(i)
    smoothed: dict[int, float] = {}
    for group in by_path.values():
        if len(group) < 2:
            continue
        starts: dict[int, int] = {}
        ends: dict[int, int] = {}
        for i in group:
            r = cands[i].row
            starts.setdefault(r[START], i)
            ends.setdefault(r[END], i)
        for i in group:
            r = cands[i].row
            start, end = r[START], r[END]
            score = base[i]
            for d, weight in enumerate(NEIGHBOUR_WEIGHTS, 1):
                near = [base[j] * _lift(cands[j].row, r) for j in (ends.get(start - d), starts.get(end + d))
                        if j is not None]
                if near:
                    score += weight * max(near)
            smoothed[i] = score
    for i, score in smoothed.items():
        cands[i].score = score
    if base:
        cands.sort(key=lambda c: -(c.score or 0.0))
    return cands


def _lift(match: sqlite3.Row | tuple[Any, ...], lifted: sqlite3.Row | tuple[Any, ...]) -> float:
    """The share of a neighbour's score that may lift `lifted`: all of it unless `lifted` costs
    more than the match it rides on (see NEIGHBOUR_COST_POWER)."""
    if not NEIGHBOUR_COST_POWER:
        return 1.0
    ratio = (len(match[CONTENT]) + NEIGHBOUR_COST_SLACK) / (len(lifted[CONTENT]) + NEIGHBOUR_COST_SLACK)
    return 1.0 if ratio >= 1.0 else ratio ** NEIGHBOUR_COST_POWER


_WORDS = lazy(r"[^\W\d_]{4,}")


def stem(word: str) -> str:
    """The crude prefix stem `query_stems` takes of a question term."""
    return word[: max(4, len(word) - 3)] if len(word) > 4 else word


def feedback(ranked: list[Candidate], q: Query) -> list[Candidate]:
    """Pseudo-relevance feedback inside the pool: the words of the best candidates that the
    question lacks ("hobbies" -> the "painting" and "pottery" of the turns it found) lift the
    other candidates that hold them, softly (see PRF_WEIGHT), re-sorted."""
    if not PRF_WEIGHT or q.raw or len(ranked) < 2:
        return ranked
    top = [c for c in ranked[:PRF_DOCS] if c.score]
    total = sum(c.score or 0.0 for c in top)
    if not top or total <= 0:
        return ranked
    asked = query_stems(q)
    weight: dict[str, float] = {}
    for c in top:
        words = [w for w in _WORDS.findall(c.row[CONTENT].lower()) if w not in STOPWORDS]
        for w in words:
            st = stem(w)
            if st not in asked:
                weight[st] = weight.get(st, 0.0) + (c.score or 0.0) / total / len(words)
    if not weight:
        return ranked
    lows = [c.row[CONTENT].lower() for c in ranked]
    blob = "\n".join(lows)
    n = len(lows)
    # A word in most of the pool says nothing about this question: weigh by its rarity there.
    scored = sorted(((w * math.log((n + 1) / (blob.count(st) + 0.5)), st) for st, w in weight.items()),
                    reverse=True)[: PRF_TERMS]
    terms = {st: w for w, st in scored if w > 0}
    if not terms:
        return ranked
    best = sum(terms.values())
    for c, low in zip(ranked, lows):
        if c.score is None:
            continue
        got = sum(w for st, w in terms.items() if covered(low, {st}))
        if got:
            c.score *= 1.0 + PRF_WEIGHT * got / best
    ranked.sort(key=lambda c: -(c.score or 0.0))
    return ranked


def diversify(ranked: list[Candidate]) -> list[Candidate]:
    """Spread a ranking over files: the n-th best candidate of a file is scaled by
    FILE_DECAY ** (n - 1), then re-sorted (within a file the order is kept). Questions whose answer
    is spread over several sessions lose it when one session's turns fill the budget."""
    if FILE_DECAY >= 1.0 or not ranked:
        return ranked
    seen: dict[str, int] = {}
    for c in ranked:
        if c.score is None:
            continue
        n = seen.get(c.row[PATH], 0)
        seen[c.row[PATH]] = n + 1
        c.score *= FILE_DECAY ** n
    ranked.sort(key=lambda c: -(c.score or 0.0))
    return ranked


def day_of(row: sqlite3.Row | tuple[Any, ...]) -> date | None:
    """The day a chunk is about: its event date, else its daily log's date."""
    ev = row[EVENT_START]
    if ev:
        try:
            return date.fromisoformat(ev[:10])
        except ValueError:
            pass
    return log_date(row[PATH])


def in_window(ranked: list[Candidate], window: tuple[date, date] | None) -> list[Candidate]:
    """Boost (never filter) the candidates dated inside the question's time window, re-sorted."""
    if window is None or TIME_BOOST == 1.0 or not ranked:
        return ranked
    lo, hi = window
    hit = False
    for c in ranked:
        if c.score is None:
            continue
        day = day_of(c.row)
        if day is not None and lo <= day <= hi:
            c.score *= TIME_BOOST
            hit = True
    if hit:
        ranked.sort(key=lambda c: -(c.score or 0.0))
    return ranked


def window_holds(before: list[Candidate], after: list[Candidate], window: tuple[date, date] | None) -> list[Candidate]:
    """`after` (a reordering of `before` by recency) with every move undone that carried a candidate
    dated outside the question's time window above one inside it that ranked above it in
    `before`. Recency still orders the candidates inside the window among themselves, those
    outside among themselves, and may lift an inside one over an outside one; but a newer line
    outside the window never passes one inside ("what did Peter do in November" asked in December
    is not asking for December's lines, whose names-only scores are all close calls). An outside
    candidate held back waits, in `after`'s order, until the inside ones it ranked under are placed."""
    if window is None or not WINDOW_HOLDS or before == after:
        return after

    def inside(c: Candidate) -> bool:
        day = day_of(c.row)
        return day is not None and window[0] <= day <= window[1]

    lo = next(i for i, (b, a) in enumerate(zip(before, after)) if b is not a)
    place = {id(c): i for i, c in enumerate(before[lo:])}  # each candidate's place in `before`
    inside_at = sorted(i for i, c in enumerate(before[lo:]) if inside(c))
    unplaced = set(inside_at)  # the places of the inside candidates not yet placed
    first = 0  # inside_at[first]: the highest of them (unplaced ones below it are placed lazily)
    out, waiting = after[:lo], []
    for c in after[lo:]:
        if place[id(c)] in unplaced:
            out.append(c)
            unplaced.discard(place[id(c)])
            while first < len(inside_at) and inside_at[first] not in unplaced:
                first += 1
        else:
            waiting.append(c)
        while waiting and (first == len(inside_at) or place[id(waiting[0])] < inside_at[first]):
            out.append(waiting.pop(0))
    return out + waiting


def speaker_of(text: str) -> str | None:
    """Who speaks a turn written "Caroline: ..." (lowercased), or None."""
    colon = text.find(": ", 0, 40)
    return text[:colon].lower() if colon > 0 else None


def by_speaker(ranked: list[Candidate], names: set[str]) -> list[Candidate]:
    """Boost the turns whose speaker ("Caroline: ...", lowercased in `names`) the question names."""
    if SPEAKER_BOOST == 1.0 or not names or not ranked:
        return ranked
    hit = False
    for c in ranked:
        if c.score is not None and speaker_of(c.row[CONTENT]) in names:
            c.score *= SPEAKER_BOOST
            hit = True
    if hit:
        ranked.sort(key=lambda c: -(c.score or 0.0))
    return ranked


def aliased(cands: list[Candidate], q: Query, bullets: dict[int, Alias] | None = None) -> list[str]:
    """The names to add to a question that calls someone by another name: the entity's own name
    when the question uses an alias ("Mimi" -> "Melanie"), its aliases when the question uses its
    name. From the candidates that are an entity page's `aliases:` line or an alias bullet of a
    Retain section (`bullets`, by candidate id: see parse.retain.Alias); the bm25 pool already
    holds that line when the question says either name, and only what was in memory as of the
    question's point, so the expansion is as-of exact."""
    terms = set(q.terms)

    def said(name: str) -> bool:
        words = set(name.lower().replace("-", " ").split()) - STOPWORDS
        return bool(words) and words <= terms

    out: dict[str, None] = {}
    for c in cands:
        stem = entity_page_stem(c.row[PATH])
        if stem is not None and "alias" in c.row[CONTENT].lower():
            canon, names = stem, parse_aliases(c.row[CONTENT])
        elif bullets and c.row[ID] in bullets:
            canon, names = bullets[c.row[ID]].entity, list(bullets[c.row[ID]].names)
        else:
            continue
        if any(said(n) for n in names) and not said(canon):
            out[canon.replace("-", " ")] = None
        elif said(canon):
            out.update(dict.fromkeys(n for n in names if not said(n)))
    return list(out)
