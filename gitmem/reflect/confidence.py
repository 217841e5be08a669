"""Opinion confidence arithmetic: deterministic, documented, conservative.

The model only labels each (fact, opinion) pair: supports / contradicts / unrelated, weak / strong.
This module turns labels into a confidence change; nothing here calls a model.

Rules (one reflection = one call to `update`):
1. Per piece of evidence: supports weak +0.03, supports strong +0.06, contradicts weak -0.05,
   contradicts strong -0.10, unrelated 0. Contradiction weighs more than support on purpose:
   a belief should be easier to doubt than to entrench.
2. The same evidence never counts twice: evidence is keyed by (path, normalized text), so a fact
   judged in an earlier reflection (or repeated in the same run) adds nothing.
3. The sum of one reflection's deltas is clamped to [-0.15, +0.15] (MAX_STEP) — small, explainable
   moves. Only when there are >= 2 *independent* strong contradictions (different files or
   different commits) may it fall further, down to -0.30 (MAX_DROP): large jumps need strong
   contradiction plus repeated evidence.
4. The result is clamped to [0.05, 0.95]: no opinion becomes certain or impossible by arithmetic.
5. An opinion without a stated confidence starts at 0.5.
Values are rounded to 2 decimals (what bank/opinions.md shows is what was computed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

DELTAS: dict[tuple[str, str], float] = {
    ("supports", "weak"): 0.03,
    ("supports", "strong"): 0.06,
    ("contradicts", "weak"): -0.05,
    ("contradicts", "strong"): -0.10,
}
MAX_STEP = 0.15
MAX_DROP = 0.30
FLOOR, CEILING = 0.05, 0.95
DEFAULT = 0.5


@dataclass(frozen=True)
class Evidence:
    relation: str  # supports|contradicts|unrelated
    strength: str  # weak|strong
    path: str
    commit: str | None
    content: str
    source: str  # citation path#Lx-Ly@sha7
    by: str = "model"  # who judged it: "model", or the rule (judge.ruled)

    @property
    def key(self) -> str:
        return evidence_key(self.path, self.content)

    @property
    def delta(self) -> float:
        return DELTAS.get((self.relation, self.strength), 0.0)


@dataclass
class Update:
    before: float
    after: float
    raw: float  # sum of the counted deltas before clamping
    counted: list[Evidence] = field(default_factory=list)
    clamped: bool = False
    wide: bool = False  # the >= 2 independent strong contradictions rule applied

    @property
    def delta(self) -> float:
        return round(self.after - self.before, 2)


def evidence_key(path: str, content: str) -> str:
    return f"{path}\n{' '.join(content.lower().split())}"


def start(stated: float | None) -> float:
    """The confidence an opinion enters reflection with."""
    return clamp(DEFAULT if stated is None else stated)


def clamp(value: float) -> float:
    return round(min(CEILING, max(FLOOR, value)), 2)


def update(before: float, evidence: list[Evidence], seen: set[str] | frozenset[str] = frozenset()) -> Update:
    """Apply one reflection's evidence to `before` (see the module docstring); `seen` holds the
    keys of evidence counted in earlier reflections."""
    counted: list[Evidence] = []
    keys = set(seen)
    for ev in evidence:
        if ev.delta == 0.0 or ev.key in keys:
            continue
        keys.add(ev.key)
        counted.append(ev)
    raw = round(sum(ev.delta for ev in counted), 4)
    strong_against = {(ev.path, ev.commit) for ev in counted if ev.relation == "contradicts" and ev.strength == "strong"}
    wide = len(strong_against) >= 2
    low = -MAX_DROP if wide else -MAX_STEP
    step = min(MAX_STEP, max(low, raw))
    after = clamp(before + step)
    return Update(before=round(before, 2), after=after, raw=raw, counted=counted,
                  clamped=step != raw, wide=wide and raw < -MAX_STEP)
