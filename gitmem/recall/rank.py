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
- MIN_CANDIDATES / CANDIDATES_PER_K: the pool the rerank sees, max(4k, 600): neighbours only count
  inside the pool (150 / 300 / 600: 0.693 / 0.714 / 0.724 R@10).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from gitmem.index.store import CONTENT, END, ENTITIES, FACT, PATH, START
from gitmem.recall.query import Query

CANDIDATES_PER_K = 4
MIN_CANDIDATES = 600
ENTITY_BOOST = 1.5
FACT_BOOST = 1.15
COVERAGE_POWER = 1.0
NEIGHBOUR_WEIGHTS = (0.5, 0.5, 0.25, 0.125)  # for candidates 1, 2, 3, 4 lines away


@dataclass(slots=True)
class Candidate:
    """A chunk row on its way to becoming a result: ranked as a row, turned into a dict only if returned."""

    row: sqlite3.Row | tuple[Any, ...]
    score: float | None
    uncommitted: bool = False


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


def rerank(cands: list[Candidate], q: Query, wanted: set[str]) -> list[Candidate]:
    """Re-score the bm25 candidates in place and sort them best first. `wanted`: the entity keys
    named in the question that memory knows (see the module docstring for each factor)."""
    # A crude prefix stem, close enough to the index's porter stemmer to tell whether a chunk
    # contains a question term ("painting" -> "paint", "painted" -> "pain"), tested as a substring.
    stems = {t[: max(4, len(t) - 3)] if len(t) > 4 else t for t in q.terms if len(t) > 1}
    base: dict[int, float] = {}
    for i, c in enumerate(cands):
        score = c.score
        if score is None:
            continue
        r = c.row
        if wanted and not wanted.isdisjoint(r[ENTITIES].split()):
            score *= ENTITY_BOOST
        if r[FACT]:
            score *= FACT_BOOST
        if stems:
            score *= (0.5 + covered(r[CONTENT].lower(), stems) / len(stems)) ** COVERAGE_POWER
        base[i] = score
    # Neighbours by line distance within one file: a range ending d lines before another's start.
    # Only files with two or more candidates can have any (at 1M lines most have one).
    by_path: dict[str, list[int]] = {}
    for i in base:
        by_path.setdefault(cands[i].row[PATH], []).append(i)
    smoothed = dict(base)
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
                near = [base[j] for j in (ends.get(start - d), starts.get(end + d)) if j is not None]
                if near:
                    score += weight * max(near)
            smoothed[i] = score
    for i, score in smoothed.items():
        cands[i].score = score
    if base:
        cands.sort(key=lambda c: -(c.score or 0.0))
    return cands
