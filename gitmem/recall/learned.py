"""A learned pair test in currency (issue 13, wave 10): does a newer statement about the entity a
question names answer it in place of the statement recall put first?

The words-only rules of `currency.newer_first` decide pair by pair from rules written by hand; each
wave's rules gained little on a set they had not seen. This is the other road: a logistic
regression over features that read the *shape* of the question and of the two statements (what
`newer_first` already reads of a candidate: the attribute families it gives, whether it reports
something done, ends a state, holds for a while, is about its own entity; the type of value the
question asks for and whether each statement gives one; how many of the question's words each
holds; the days between them), trained offline on the labelled current-truth sets
(bench/truth_learn.py) and shipped as weights (gitmem/recall/learned_model.py). No word of any set,
no name, no model call: a dot product of 60 numbers per pair, pure Python.

Where it acts (MODE): "replace" (wave 10), in place of `newer_first`'s rules, on the head of the
ranking, for a question that names an entity. A is the first candidate naming that entity (what an
agent takes as the answer); each later-recorded candidate B naming it, of the same kind, is scored;
the best B whose probability reaches THRESHOLD goes ahead of A. "after" (wave 11): the rules first,
then the same test on their ranking, but only for a B none of the trap guards refuses
(`currency.refusals`: about someone else, an addition, another attribute or none read, an
attribute not asked, a thing asked it lacks, something done once, no word of the question; and,
wave 14, the model's own BESIDE_A_YES; a plan, a wish or a retold change is never scored at all),
at AFTER_THRESHOLD.
Ranking only: nothing is hidden or marked superseded (index links are supersede.py's alone and
unchanged: no RULES bump), and it reads only the candidates the as-of filter let through (no leak).

Why not in place of the rules: there it loses to them on the sets they were written against (445 / 558
against 473 in leave-one-set-out) and on the probe's traps (42 / 62 against 60 / 62), though ahead of
the rules' first blind run on every set (bench/RESULTS.md, "Current truth, wave 10"). After the
rules, past their guards, it can reach little: of the 63 questions the rules miss with the current
line in the head, the guards refuse that line in 57, and leave-one-set-out it gains 5 (heldout6 3,
heldout7 2) and loses 2 (heldout4 1, probe 1), both among its surest moves: no threshold is
loss-free ("Current truth, wave 11"). Wave 14, twelve sets, nine guards: +11 / -1 leave-one-set-out;
the one loss is heldout4's "@Gwendolyn: @Ceridwen's retirement do ...", a possessive opening read as
the filed entity (parse's reading, not this model's), so it stays off until that reading holds
("Current truth, wave 14"). Wave 15: with that reading (parse.entities `subject`: another
@person's thing opening the clause is theirs), thirteen sets, nine guards: +12 / -0 leave-one-set-out,
gains on six sets, false supersession unchanged; but in hybrid recall it loses heldout3's Yannick
(a same-day line moved ahead of the one meaning had put first), so it stayed off ("Current truth,
wave 15"). Wave 16: the model's own guard SAME_DAY (a day's lines are neither older nor newer) holds
that line; fourteen sets, ten guards: +12 / -0 leave-one-set-out, gains on seven sets, and with the
shipped weights no set loses lexically or in hybrid recall, so it ships on (MODE "after"; "Current
truth, wave 16"). A refused pair is not scored (its features are most of the model's cost).

RECORD is a bench hook: when it is a list, every question's scored pairs are appended to it (the
training data is read through the same code that ranks).
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

import math
import re
from typing import Any, NamedTuple

from gitmem.index.store import CONTENT, ENTITIES, ID
from gitmem.index.supersede import has_cue, is_additive
from gitmem.lazyre import lazy
from gitmem.parse import answers, attributes
from gitmem.recall.currency import GUARDS as RULES_GUARDS, ONE_OCCASION, OPENING_WORD, RECENCY_TOP, Asked, refusals, said_of
from gitmem.recall.rank import Candidate, covered

# How the model decides (see the module's doc): "off" (newer_first's rules alone), "replace" (wave
# 10: the model in place of the rules) or "after" (wave 11, shipped since wave 16: the rules, then
# the model where none of the trap guards refuses the newer line).
MODE = "after"
# A trap guard of the model's own (wave 14), beside the rules' eight (currency.refusals): for a yes/no
# question whose older line states the very predicate asked ("Plays tennis every Sunday" for "Does
# Sina play tennis?": a direct yes), a newer line reporting something done once that ends nothing
# and says no "no" ("Stopped at the tennis club cafe for lunch") is at most an instance of that yes:
# it cannot give another answer in its place. The rules never move such a line (`_an_instance`
# refuses it unless it names the thing asked, which an instance of a habit does).
BESIDE_A_YES = "something done once beside a direct yes"
# Wave 16: two statements with one event day are neither older nor newer. The model reads a pair as
# "the later one answers in place of the earlier", which a day's log does not order: its lines are
# written together ("Writes his thesis on a 2021 MacBook Air" and "PhD student in marine biology at
# Brest", one log) and both hold. The rules order such a pair by what each gives of the question
# (`currency._answers_instead`); the model does not move either.
SAME_DAY = "said the same day"
GUARD_NAMES: tuple[str, ...] = (*RULES_GUARDS, BESIDE_A_YES, SAME_DAY, ONE_OCCASION)
# The trap guards the model's decision must pass; bench/truth_learn.py varies it.
GUARDS: frozenset[str] = frozenset(GUARD_NAMES)
# Only statements newer_first may move (`_Said.mover`) are scored.
MOVERS_ONLY = True

_NUMBER = lazy(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
               r"fifty|hundred|thousand|first|second|third|fourth|fifth|dozen|half)\b", re.I)
_TYPES = ("time", "money", "place", "name", "polarity")


class Scored(NamedTuple):
    """One question's pairs as the bench hook records them."""

    top: str  # A's content
    others: list[tuple[str, list[float], float, tuple[str, ...]]]  # (B's content, its features, its
    # probability, the trap guards that refuse it: currency.refusals)


# Bench hook (see the module's doc): None in use.
RECORD: list[Scored] | None = None


def _days(a: str, b: str) -> float:
    if not (a and b):
        return 0.0
    from datetime import date

    try:
        return float((date.fromisoformat(b) - date.fromisoformat(a)).days)
    except ValueError:
        return 0.0


def features(a: Any, b: Any, q: Asked, rank_a: int, rank_b: int, score_a: float | None,
             score_b: float | None) -> list[float]:
    """The pair's features (a, b: `currency.said_of` readings; A ranked first, B recorded later)."""
    fam = q.families
    yes_no = "polarity" in q.expects
    b_gives = [bool(answers.values(b.text, t)) and t in q.expects for t in _TYPES[:4]]
    a_gives = [bool(answers.values(a.text, t)) and t in q.expects for t in _TYPES[:4]]
    b_no = yes_no and "no" in answers.values(b.text, "polarity")
    a_no = yes_no and "no" in answers.values(a.text, "polarity")
    b_num = _NUMBER.search(b.text) is not None
    a_num = _NUMBER.search(a.text) is not None
    new_names = answers.values(b.text, "name") - answers.values(a.text, "name")
    gap = _days(a.ev, b.ev)
    ratio = (score_b / score_a) if score_a and score_b else 0.0
    return [
        float(len(b.asked)), float(len(a.asked)), float(len(b.asked) - len(a.asked)),
        float(bool(b.attrs & fam)), float(bool(a.attrs & fam)), float(bool(a.attrs & b.attrs)),
        float(bool(fam)), float(len(b.attrs) > 0), float(len(a.attrs) > 0),
        min(len(a.words & b.words), 4) / 4.0,
        float(has_cue(b.text)), float(has_cue(a.text)),
        float(b.event), float(a.event), float(b.ending), float(a.ending),
        float(b.for_now), float(a.for_now), float(b.over), float(a.over),
        float(b.own), float(a.own), float(b.subject == a.subject),
        float(b.mover), float(is_additive(b.text)),
        *map(float, b_gives), *map(float, a_gives), float(any(b_gives)), float(any(a_gives)),
        float(yes_no), float(b_no), float(a_no), float(q.quantity), float(q.quantity and b_num),
        float(q.quantity and a_num), float(bool(q.expects)),
        min(len(new_names), 3) / 3.0,
        float(b.kind == a.kind), float(b.kind == "opinion"),
        math.log1p(max(gap, 0.0)) / 5.0, float(gap <= 0),
        math.log1p(rank_b - rank_a) / 3.0, min(ratio, 2.0),
        # What the older one holds of the question that the newer lacks, and interactions the
        # linear model cannot form: an instance of an activity ("Sang a solo at the concert") is
        # an event that ends nothing; a yes/no question answered "no" by the newer line.
        float(len(a.asked - b.asked)), float(not b.asked), float(not b.asked and bool(a.asked)),
        float(b.event and not b.ending), float(yes_no and b.ending), float(yes_no and b.event and not b.ending),
        float(any(a_gives) and not any(b_gives)), float(any(b_gives) and not any(a_gives)),
        float(attributes.thing_subject(b.text)),
        float(bool(b.attrs & fam) and not a.attrs & fam), float(bool(a.attrs & fam) and not b.attrs & fam),
    ]


def _beside_a_yes(b: Any, a: Any, q: Asked) -> bool:
    """Whether BESIDE_A_YES refuses `b`, newer, the place of `a`."""
    if "polarity" not in q.expects or not b.event or b.ending or "no" in answers.values(b.text, "polarity"):
        return False
    head = OPENING_WORD.match(a.text)
    return head is not None and bool(covered(head.group(1).lower(), q.stems))


def own_refusals(b: Any, a: Any, q: Asked) -> tuple[str, ...]:
    """The model's own trap guards that refuse `b` the place of `a`, beside the rules' (`refusals`)."""
    return ((SAME_DAY,) if a.ev and a.ev == b.ev else ()) + ((BESIDE_A_YES,) if _beside_a_yes(b, a, q) else ())


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0


def probability(x: list[float], model: Any) -> float:
    """P(B answers in place of A), from the shipped (or a bench-trained) model."""
    z = model.BIAS + sum(w * (v - m) / s for w, v, m, s in zip(model.WEIGHTS, x, model.MEAN, model.SCALE))
    return _sigmoid(z)


def ahead(ranked: list[Candidate], q: Asked, replaced: frozenset[int], past: frozenset[int],
          pending: frozenset[int], model: Any = None, readings: dict[int, Any] | None = None) -> list[Candidate]:
    """`ranked` with the best newer statement moved ahead of the first one naming the question's
    entity, when the model says it answers in place of it (see the module's doc). `readings`: what
    `newer_first` read of the head's candidates by row id (`said_of`'s readings: not read again)."""
    if not (MODE != "off" or RECORD is not None) or not q.entities or len(ranked) < 2:
        return ranked
    if model is None:
        from gitmem.recall import learned_model as model
    if not model.WEIGHTS and RECORD is None:
        return ranked
    head = ranked[:RECENCY_TOP]
    top = next((i for i, c in enumerate(head) if not c.uncommitted and c.score is not None
                and q.entities & set((c.row[ENTITIES] or "").split())), None)
    if top is None:
        return ranked
    gone = set(past) | pending
    skip = gone | replaced
    a_c = head[top]
    a = None  # read when some newer candidate names the entity (most questions have none)
    read = readings or {}
    guarded = MODE == "after" or RECORD is not None
    best, best_p = None, 0.0
    rec: list[tuple[str, list[float], float, tuple[str, ...]]] = []
    for j in range(top + 1, len(head)):
        c = head[j]
        if c.uncommitted or c.score is None or c.row[ID] < a_c.row[ID] or c.row[ID] in skip:
            continue
        if not q.entities & set((c.row[ENTITIES] or "").split()):
            continue
        a = a or read.get(a_c.row[ID]) or said_of(a_c, q, gone)
        b = read.get(c.row[ID]) or said_of(c, q, gone)
        # The rules' hard guard stays in front: a plan, a wish, a memory told again never moves
        # ahead (`mover`), whatever the model says.
        if b.kind != a.kind or (a.ev and b.ev and b.ev < a.ev) or (MOVERS_ONLY and not b.mover):
            continue
        # After the rules, the model decides only where none of the trap guards refuses B: a refused
        # pair is not scored at all (its features are most of the model's cost), unless recorded;
        # the model's own guards (cheap: the day first) before the rules'.
        refused = own_refusals(b, a, q) if guarded else ()
        if RECORD is None and GUARDS.intersection(refused):
            continue
        refused += refusals(b, a, q) if guarded else ()
        if RECORD is None and GUARDS.intersection(refused):
            continue
        x = features(a, b, q, top, j, a_c.score, c.score)
        p = probability(x, model) if model.WEIGHTS else 0.0
        if RECORD is not None:
            rec.append((c.row[CONTENT] or "", x, p, refused))
        acts = p >= model.THRESHOLD if MODE == "replace" else \
            MODE == "after" and p >= model.AFTER_THRESHOLD and not GUARDS.intersection(refused)
        if acts and p > best_p:
            best, best_p = j, p
    if RECORD is not None:
        RECORD.append(Scored(a_c.row[CONTENT] or "", rec))
    if best is None:
        return ranked
    moved = head[best]
    out = head[:top] + [moved] + [c for k, c in enumerate(head[top:], top) if k != best]
    return out + ranked[RECENCY_TOP:]
