"""Wave 19 of the reflection judge: consistency under polarity, then the query step (issue 15).

- `--score`: on every labelled set, the pairs whose verdict reflection takes from the 1.5B (gate
  passed, no rule, the shipped record decides: margin or `judge.Support`) asked the labels question
  once more about the opinion's negation (`judge.opposite` of the form asked: the `negated`
  question), into the score cache. Stopping it loses nothing: a re-run asks only what is missing.
- report (cache only): per set, accuracy / wrong direction / abstain of SmolLM2 (the default), of
  the 1.5B as shipped, with the polarity check fitted leave-one-set-out (LOSO: each set judged by the
  bounds fitted on the others; a `--blind` set by the bounds fitted on every tuning set), with the
  query step (wave 18's FROZEN numbers, and refitted LOSO on top of the shipped record), both
  together, and the plain baseline; then the 1.5B's answers per kind of case.

    nice -n 19 .venv/bin/python bench/judge_wave19.py --score --cache C [--blind FILE]
    nice -n 19 .venv/bin/python bench/judge_wave19.py --cache C [--blind FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, InvalidModelOutput, LlamaModel
from gitmem.reflect.prompts import Relation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_wave8 import _fmt  # noqa: E402  (bench scripts import each other by path)
from judge_wave13 import NAME, _CacheOnly, load_sets  # noqa: E402
from judge_wave14 import MODEL  # noqa: E402
from judge_wave15 import HELDOUT, OldScheme, baseline  # noqa: E402
from judge_wave18 import FROZEN, shipped  # noqa: E402


def all_sets(blind: list[Path]) -> dict[str, list[C.Case]]:
    sets = load_sets(HELDOUT)
    sets.update({p.stem.replace("judge_", ""): C.load_cases(p) for p in blind})
    return sets


class Pair(NamedTuple):
    """One labelled case as reflection judges it with the shipped 1.5B record, and the numbers the
    steps measured here read."""

    name: str
    case: C.Case
    now: Relation  # what reflection answers now (rules first, then the shipped record through judge.decide)
    by_model: bool  # `now` is the model's verdict (not the gate's, not a rule's, not an abstention)
    asked: Relation  # the model's verdict about the form asked (the affirmative form of an aversion: before turning)
    negated: float | None  # the labels contrast on the negation of the form asked, past the offset (None: not asked)
    contrast: float  # agree's labels contrast past the offset (0 when gated)
    open: bool  # gate passed, no rule, the shipped record abstains
    query: tuple[float, float] | None  # the query's (yes-vs-no, unknown) where open and asked
    flipped: bool


def load(cache: Path, blind: list[Path]) -> list[Pair]:
    cal = shipped()
    model = CachedModel(_CacheOnly(NAME), cache)  # type: ignore[arg-type]
    out = []
    for name, cases in all_sets(blind).items():
        for s in C.score_cases(model, cases, ["agree"], second=False):
            ruled = None if s.gated else J.ruled(s.case.fact, s.case.opinion)
            sc = s.scores.get("agree")
            if sc is None or ruled is not None:
                now: Relation = "unrelated" if ruled is None else ruled.relation
                out.append(Pair(name, s.case, now, False, "unrelated", None, 0.0, False, None, False))
                continue
            d = J.decide(sc, "agree", cal.margin, cal.offset, cal.floor, slack=cal.slack, support=cal.support)
            asked = J.turn(d.relation) if sc.flipped else d.relation
            negated = query = None
            try:
                if d.relation != "unrelated":
                    n = J.ask(model, s.case.fact, s.case.opinion, "negated").negated
                    assert n is not None
                    negated = n[0] - n[1] - cal.offset
                else:
                    query = J.second_step(J.ask(model, s.case.fact, s.case.opinion, "query"))
            except InvalidModelOutput:
                pass
            out.append(Pair(name, s.case, d.relation, d.relation != "unrelated", asked, negated, J.contrast(sc) - cal.offset,
                            d.relation == "unrelated", query, sc.flipped))
    return out


def score(cache: Path, blind: list[Path], model_path: Path) -> int:
    """Ask the `negated` question of every pair the shipped record decides (and, on a blind set, the
    query of the pairs it leaves open), into the cache."""
    llama = LlamaModel(model_path)
    print(llama.runtime, file=sys.stderr, flush=True)
    cal = shipped()
    unseen = {p.stem.replace("judge_", "") for p in blind}
    with CachedModel(llama, cache) as model:
        for name, cases in all_sets(blind).items():
            t0, misses0 = time.perf_counter(), model.misses
            for s in C.score_cases(model, cases, ["agree"], second=False):
                sc = s.scores.get("agree")
                if sc is None or J.ruled(s.case.fact, s.case.opinion) is not None:
                    continue
                d = J.decide(sc, "agree", cal.margin, cal.offset, cal.floor, slack=cal.slack, support=cal.support)
                if d.relation != "unrelated":
                    J.ask(model, s.case.fact, s.case.opinion, "negated")
                elif name in unseen:
                    J.ask(model, s.case.fact, s.case.opinion, "query")
            print(f"{name}: {model.misses - misses0} prompts asked, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return 0


# The polarity check (`judge.Consistency`): a model verdict stands only where the negation of the
# form asked reads the other way, measured as `judge.negation_contrast` (the labels contrast on the
# form asked minus the one on its negation; the offset cancels): "supports" only where it is above
# `sup`, "contradicts" only where it is below `con` (each moved out by the record's slack, as judged here).
Check = tuple[float, float]
OFF: Check = (float("-inf"), float("inf"))


def difference(p: Pair) -> float:
    assert p.negated is not None
    return p.contrast - p.negated


def checked(p: Pair, check: Check) -> Relation:
    if not p.by_model or p.negated is None:
        return p.now
    slack = J.DRIFT_SLACK
    ok = difference(p) > check[0] + slack if p.asked == "supports" else difference(p) < check[1] - slack
    return p.now if ok else "unrelated"


def check_grid(ps: list[Pair]) -> list[Check]:
    sup = sorted(difference(p) for p in ps if p.by_model and p.negated is not None and p.asked == "supports")
    con = sorted(difference(p) for p in ps if p.by_model and p.negated is not None and p.asked == "contradicts")
    q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))]  # noqa: E731
    # bounds between neighbouring values, so the slack decides no tie
    ss = [float("-inf")] + [q(sup, i / 60) - J.DRIFT_SLACK + 1e-6 for i in range(1, 21)]
    cs = [float("inf")] + [q(con, 1 - i / 60) + J.DRIFT_SLACK - 1e-6 for i in range(1, 21)]
    return [(a, b) for a in ss for b in cs]


def change(ps: list[Pair], answers: list[Relation]) -> tuple[int, int]:
    """(right answers lost, wrong directions removed) against `now`."""
    lost = sum(p.now == p.case.expected and a != p.now for a, p in zip(answers, ps))
    removed = sum(p.now not in ("unrelated", p.case.expected) and a == "unrelated" for a, p in zip(answers, ps))
    return lost, removed


def check_fit(by: dict[str, list[Pair]], train: list[str], grid: list[Check]) -> Check:
    """The check removing the most wrong directions net of right answers lost over `train`, losing
    at most one right answer on every training set; OFF when none removes more than it costs."""
    best: tuple[tuple[int, int], Check] = ((0, 0), OFF)
    for c in grid:
        per = [change(by[k], [checked(p, c) for p in by[k]]) for k in train]
        if any(lost > 1 for lost, _ in per):
            continue
        lost, removed = sum(x for x, _ in per), sum(y for _, y in per)
        if (removed - lost, -lost) > best[0]:
            best = ((removed - lost, -lost), c)
    return best[1]


def queried(p: Pair, a: Relation, step: J.Recheck) -> Relation:
    """`a`, or where the shipped record leaves the pair open, the query step's "supports" (as `judge._recheck` reads it)."""
    if not p.open or p.query is None:
        return a
    slack = J.DRIFT_SLACK
    yes, unknown = p.query
    if yes > step.yes + slack and unknown < step.unknown - slack and p.contrast > step.contrast + slack:
        return J.turn("supports") if p.flipped else "supports"
    return a


def query_grid(ps: list[Pair]) -> list[J.Recheck]:
    ys = sorted(p.query[0] for p in ps if p.query is not None)
    us = sorted(p.query[1] for p in ps if p.query is not None)
    q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))]  # noqa: E731
    return [J.Recheck(yes=y, unknown=q(us, j / 10) if j < 10 else 1e9, contrast=0.0)
            for y in sorted({max(0.0, q(ys, i / 40)) for i in range(40)}) for j in range(1, 11)]


def query_fit(by: dict[str, list[Pair]], train: list[str], grid: list[J.Recheck]) -> J.Recheck:
    """wave 18's chosen criterion: the most answers gained net of wrong ones over `train`, at most a
    tenth of the step's verdicts wrong; no step when none gains."""
    best: tuple[tuple[int, int], J.Recheck] = ((0, 0), J.NO_RECHECK)
    for step in grid:
        gain = wrong = 0
        for k in train:
            for p in by[k]:
                a = queried(p, p.now, step)
                if a != p.now:
                    gain += (a == p.case.expected) - (p.now == p.case.expected)
                    wrong += a != p.case.expected
        if gain > 0 and wrong <= 0.1 * (gain + wrong) and (gain - wrong, -wrong) > best[0]:
            best = ((gain - wrong, -wrong), step)
    return best[1]


def cell(ps: list[Pair], answers: list[Relation], ref: list[Relation] | None = None) -> str:
    n = len(ps)
    right = sum(a == p.case.expected for a, p in zip(answers, ps))
    wrong = sum(a not in ("unrelated", p.case.expected) for a, p in zip(answers, ps))
    related = [a for a, p in zip(answers, ps) if p.case.expected != "unrelated"]
    text = f"{right / n:.0%} / {wrong / n:.1%} ({wrong}) / {sum(a == 'unrelated' for a in related) / len(related):.0%}"
    if ref is not None:
        r_right = sum(a == p.case.expected for a, p in zip(ref, ps))
        r_wrong = sum(a not in ("unrelated", p.case.expected) for a, p in zip(ref, ps))
        text += f" ({right - r_right:+d}, wrong {wrong - r_wrong:+d})"
    return text


def report(cache: Path, blind: list[Path]) -> int:
    ps = load(cache, blind)
    by: dict[str, list[Pair]] = {}
    for p in ps:
        by.setdefault(p.name, []).append(p)
    names = list(by)
    unseen = [p.stem.replace("judge_", "") for p in blind]
    tuning = [k for k in names if k not in unseen]
    missing = sum(p.by_model and p.negated is None for p in ps)
    print(f"model verdicts without the negated question in the cache: {missing}", file=sys.stderr)
    print("| judge | " + " | ".join(f"{k} ({len(by[k])}{', blind' if k in unseen else ''})" for k in names) + " |")
    print("|---|" + "---:|" * len(names))

    def row(title: str, answers: dict[str, list[Relation]], ref: dict[str, list[Relation]] | None = None) -> None:
        print(f"| {title} | " + " | ".join(cell(by[k], answers[k], None if ref is None else ref[k]) for k in names) + " |")

    now = {k: [p.now for p in by[k]] for k in names}
    rules = {k: [p.now if not p.by_model and not p.open else "unrelated" for p in by[k]] for k in names}
    row("SmolLM2 (default), shipped = with any step here: the rules first, never decides", rules)
    row("1.5B as shipped (rules first, agree's margin, agree's own supports step)", now)

    # the sets whose every model verdict has its negation scored (a stopped `--score` leaves some without)
    complete = [k for k in names if all(p.negated is not None for p in by[k] if p.by_model)]
    checkable = [k for k in tuning if k in complete]
    grid = check_grid([p for p in ps if p.name in checkable])
    fits = {k: check_fit(by, checkable if k in unseen else [t for t in checkable if t != k], grid) if k in complete else OFF
            for k in names}
    full = check_fit(by, checkable, grid)
    polar = {k: [checked(p, fits[k]) for p in by[k]] for k in names}
    print("| 1.5B + the polarity check, LOSO over the sets scored (at most one right answer lost per training set) | "
          + " | ".join(cell(by[k], polar[k], now[k]) if k in complete else "not scored" for k in names) + " |")
    print(f"polarity check fitted on every tuning set: supports kept where the contrast minus the negation's > {full[0]:.2f}, "
          f"contradicts where < {full[1]:.2f} (each moved out by the slack {J.DRIFT_SLACK:.2f}); per fold: "
          + ", ".join(f"{k} ({v[0]:.2f}, {v[1]:.2f})" for k, v in fits.items()), file=sys.stderr)

    frozen = {k: [queried(p, p.now, FROZEN) for p in by[k]] for k in names}
    row("1.5B as shipped + the query step with wave 18's FROZEN numbers (no refit)", frozen, now)
    qgrid = query_grid([p for p in ps if p.name in tuning])
    qfits = {k: query_fit(by, tuning if k in unseen else [t for t in tuning if t != k], qgrid) for k in names}
    qloso = {k: [queried(p, p.now, qfits[k]) for p in by[k]] for k in names}
    row("1.5B as shipped + the query step refitted LOSO on top of it (wave 18's chosen criterion)", qloso, now)
    both = {k: [queried(p, checked(p, fits[k]), FROZEN) for p in by[k]] for k in names}
    row("1.5B + the polarity check (LOSO) + the FROZEN query step", both, now)

    def base(k: str) -> str:
        cases = all_sets(blind)[k]
        b = baseline(CachedModel(_CacheOnly(NAME), cache), cases) or baseline(OldScheme(_CacheOnly(NAME), cache), cases)  # type: ignore[arg-type]
        return "not scored" if b is None else _fmt(b)
    print("| baseline (1.5B): no gate, best label, no margin | " + " | ".join(base(k) for k in names) + " |")

    print("\nthe polarity check's changes (LOSO): set / expected / shipped / asked as / contrast minus the negation's / fact / opinion")
    for k in names:
        for p, a in zip(by[k], polar[k]):
            if a != p.now:
                print(f"- {k} / {p.case.expected} / {p.now} / {'affirmative' if p.flipped else 'written'} / {difference(p):+.2f} / "
                      f"{p.case.fact} / {p.case.opinion}")
    print("\nthe 1.5B as shipped, per kind of case over every set: kind / expected / right / wrong direction / abstained (gate, rule-free open)")
    kinds: Counter[tuple[str, str, str]] = Counter()
    for p in ps:
        got = "right" if p.now == p.case.expected else "abstain" if p.now == "unrelated" else "wrong"
        kinds[(p.case.kind, p.case.expected, got)] += 1
    for kind, expected in sorted({(k, e) for k, e, _ in kinds}):
        print(f"- {kind} / {expected} / " + " / ".join(str(kinds[(kind, expected, g)]) for g in ("right", "wrong", "abstain")))
    return 0


def parser(doc: str | None) -> argparse.ArgumentParser:
    """The options every judge script of waves 19-20 takes: the score cache, the model, `--score`."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--score", action="store_true")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--blind", type=Path, action="append", default=[], metavar="FILE")
    args = ap.parse_args(argv)
    if args.score:
        return score(args.cache, args.blind, args.model)
    return report(args.cache, args.blind)


if __name__ == "__main__":
    sys.exit(main())
