"""Wave 18 of the reflection judge: the support the 1.5B abstains on (issue 15).

- `--score`: for every labelled set, the pairs the 1.5B's shipped margin abstains on (gate passed,
  `agree` undecided at slack 0.10) asked the second-step questions of `query` and `shots`
  (judge.SECOND), into the score cache; one line per set and question with its pairs and seconds.
  Stopping it loses nothing: a re-run asks only what the cache lacks.

- report (no `--score`; cache only): accuracy / wrong direction / abstain per set of the judge at
  the start of the wave (rules first, then `agree`'s shipped margin), of the shipped record (the
  same, then the query's supports where `agree` abstains), and of a supports-only second step fitted
  leave-one-set-out (every set judged by the numbers fitted on the others) in twelve variants: the
  query's numbers alone or with a floor on `agree`'s contrast, on every pair or on the pairs asked
  as written, under three bounds on the wrong answers it may add on the training sets; a set given
  with `--blind` is judged by the numbers fitted on every other set and never trains.

    nice -n 19 .venv/bin/python bench/judge_wave18.py --score --cache C [--sets ...] [--second query,shots]
    nice -n 19 .venv/bin/python bench/judge_wave18.py --score --cache C --second query --blind FILE
    nice -n 19 .venv/bin/python bench/judge_wave18.py --cache C --second query [--blind FILE]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import NamedTuple

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, LlamaModel
from gitmem.reflect.prompts import Relation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_wave13 import NAME, _CacheOnly, load_sets  # noqa: E402
from judge_wave14 import MODEL  # noqa: E402
from judge_wave15 import HELDOUT  # noqa: E402


def shipped() -> J.Calibration:
    """The 1.5B's shipped calibration as this host reads it (no runtime recorded: DRIFT_SLACK)."""
    return J.on_runtime(J.shipped_calibrations()[J.fingerprint(NAME)], "this host")


def score(cache: Path, names: list[str], seconds: list[J.Method], model_path: Path, blind: list[Path]) -> int:
    llama = LlamaModel(model_path)
    print(llama.runtime, file=sys.stderr, flush=True)
    sets = load_sets(HELDOUT)
    sets.update({p.stem.replace("judge_", ""): C.load_cases(p) for p in blind})
    names = names + [p.stem.replace("judge_", "") for p in blind]
    cal = shipped()
    with CachedModel(llama, cache) as model:
        for method in seconds:
            for name in names:
                t0, misses0 = time.perf_counter(), model.misses
                scored = C.score_cases(model, sets[name], ["agree"], second=False)
                scored = [s._replace(scores={method: s.scores["agree"]}) if not s.gated else s for s in scored]
                after = C.ask_second(model, scored, method, cal.margin, cal.offset, cal.floor, slack=cal.slack)
                asked = sum(J.second_step(s.scores[method]) is not None for s in after if not s.gated)
                print(f"{method} {name}: {asked} open pairs of {len(scored)}, {model.misses - misses0} prompts asked, "
                      f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return 0


class Open(NamedTuple):
    """One labelled pair for the LOSO fit: its set, what it should be, what reflection answers now
    (rules first, then the shipped margin), and where that is "unrelated" on a gate-passing pair the
    rules leave, each second step's (direction, abstention) numbers (`J.second_step`) and whether
    they were asked about the opinion's affirmative form."""

    name: str
    expected: Relation
    now: Relation
    second: dict[str, tuple[float, float]]
    flipped: bool
    agree: tuple[float, float]  # `agree`'s contrast past its offset and yes/no lean past its floor, as asked
    open: bool  # gate passed, no rule, the shipped margin abstains


def pairs(cache: Path, seconds: list[J.Method], blind: list[Path]) -> list[Open]:
    sets = load_sets(HELDOUT)
    sets.update({p.stem.replace("judge_", ""): C.load_cases(p) for p in blind})
    cal = shipped()
    model = CachedModel(_CacheOnly(NAME), cache)  # type: ignore[arg-type]
    out = []
    for name, cases in sets.items():
        scored = C.score_cases(model, cases, ["agree"], second=False)
        now = C.rules_first(scored, [C.predict(s, "agree", cal.margin, cal.offset, cal.floor, slack=cal.slack) for s in scored])
        for s, answer in zip(scored, now):
            second: dict[str, tuple[float, float]] = {}
            ruled = None if s.gated else J.ruled(s.case.fact, s.case.opinion)
            if answer == "unrelated" and not s.gated and ruled is None:
                for method in seconds:
                    for q in J.SECOND[method]:
                        got = J.second_step(J.ask(model, s.case.fact, s.case.opinion, q))
                        assert got is not None
                        second[method] = got
            sc = s.scores.get("agree")
            lean = (0.0, 0.0) if sc is None else (J.contrast(sc) - cal.offset, J.yes_lean(sc) - cal.floor)
            out.append(Open(name, s.case.expected, answer, second, sc is not None and sc.flipped, lean,
                            answer == "unrelated" and not s.gated and ruled is None))
    return out


# (direction above, abstention below, `agree`'s contrast above): "supports" as asked
Step = tuple[float, float, float]


def step_answer(p: Open, method: str, step: Step, as_written: bool) -> Relation:
    """What reflection answers with the supports-only second step `step` after the rules and the margin."""
    got = p.second.get(method)
    slack = J.DRIFT_SLACK  # as `decide` reads the shipped record here (no runtime recorded): every threshold moved out
    if got is None or (as_written and p.flipped) or not (
            got[0] > step[0] + slack and got[1] < step[1] - slack and p.agree[0] > step[2] + slack):
        return p.now
    return J.turn("supports") if p.flipped else "supports"


def effect(ps: list[Open], method: str, step: Step, as_written: bool) -> tuple[int, int]:
    """(answers gained, wrong directions added) by the step on `ps`."""
    gain = wrong = 0
    for p in ps:
        a = step_answer(p, method, step, as_written)
        if a != p.now:
            gain += (a == p.expected) - (p.now == p.expected)
            wrong += a != p.expected
    return gain, wrong


def grid(ps: list[Open], method: str, xs: tuple[float, ...]) -> list[Step]:
    ds = sorted(p.second[method][0] for p in ps if method in p.second)
    us = sorted(p.second[method][1] for p in ps if method in p.second)
    q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))]  # noqa: E731
    # "supports" only where the step's own answer leans that way (the query's yes over its no, the
    # examples' supports over contradicts): a bound on "unknown" alone would read a "no" as support.
    directions = sorted({max(0.0, q(ds, i / 40)) for i in range(40)})
    return [(d, q(us, j / 10) if j < 10 else math.inf, x) for d in directions for j in range(1, 11) for x in xs]


CRITERIA = ("each1", "pooled0.5", "precision90")
# The step's own numbers alone, or also a floor on `agree`'s contrast (past its offset) for the pair.
FAMILIES: dict[str, tuple[float, ...]] = {"": (-math.inf,), " + agree's contrast": (-math.inf, 0.0, 0.5)}


def fit(by: dict[str, list[Open]], train: list[str], method: str, criterion: str, as_written: bool,
        steps: list[Step]) -> Step | None:
    """The step with the most answers gained net of wrong ones over `train` whose wrong directions
    added stay within `criterion`: each1, at most one on every training set; pooled0.5, at most 0.5%
    of the training cases; precision90, at most a tenth of its verdicts. None: no step gains."""
    best: tuple[tuple[int, int], Step] | None = None
    for step in steps:
        per = [effect(by[k], method, step, as_written) for k in train]
        gain, wrong = sum(g for g, _ in per), sum(w for _, w in per)
        cases = sum(len(by[k]) for k in train)
        ok = {"each1": all(w <= 1 for _, w in per), "pooled0.5": wrong <= 0.005 * cases,
              "precision90": wrong <= 0.1 * (gain + wrong)}[criterion]
        if ok and gain > 0 and (best is None or (gain - wrong, -wrong) > best[0]):
            best = ((gain - wrong, -wrong), step)
    return None if best is None else best[1]


# The candidate fixed for the next blind set: the variant FIXED, fitted on the fourteen labelled sets
# of wave 18 (`report` prints the same numbers as "fitted on every tuning set"), as a record of the 1.5B.
FROZEN = J.Recheck(yes=0.8172, unknown=1.8107, contrast=0.0)


def frozen() -> J.Calibration:
    """The 1.5B's shipped record with FROZEN's query step (as this host reads it: DRIFT_SLACK)."""
    return shipped()._replace(method="query", query_yes=FROZEN.yes, query_unknown=FROZEN.unknown, query_contrast=FROZEN.contrast,
                              support_contrast=J.NEVER, support_lean=J.NEVER)  # measured without agree's own supports step


def as_judged(cache: Path, blind: list[Path], cal: J.Calibration) -> dict[str, list[Relation]]:
    """Every set judged as reflection judges it with `cal` (`judge.decide`; a second step's question
    asked only where the first abstains, from the cache), rules first; and the model alone on the
    report half and on the record's fresh set (heldout6) printed."""
    sets = load_sets(HELDOUT)
    sets.update({p.stem.replace("judge_", ""): C.load_cases(p) for p in blind})
    model = CachedModel(_CacheOnly(NAME), cache)  # type: ignore[arg-type]
    out = {}
    for name, cases in sets.items():
        scored = C.score_cases(model, cases, ["agree"], second=False)
        scored = [s._replace(scores={cal.method: s.scores["agree"]}) if not s.gated else s for s in scored]
        scored = C.ask_second(model, scored, cal.method, cal.margin, cal.offset, cal.floor, slack=cal.slack)
        alone = [C.predict(s, cal.method, cal.margin, cal.offset, cal.floor, cal.recheck, cal.slack, cal.support) for s in scored]
        if name in ("report", "heldout6"):
            m = C.tally(scored, alone)
            print(f"{cal.method}, the model alone, {name}: accuracy {m.accuracy:.4f}, wrong direction {m.wrong_direction:.4f}, "
                  f"abstain {m.abstain:.4f} ({m.cases} cases)", file=sys.stderr)
        out[name] = C.rules_first(scored, alone)
    return out


# The variant fixed for the next blind set (chosen after seeing the LOSO table: see bench/RESULTS.md
# "Reflect judge, wave 18"): the query's supports, every pair, with agree's contrast above its offset,
# at most a tenth of the step's verdicts wrong on the training sets.
FIXED = ("query", " + agree's contrast", False, "precision90")


# agree's own supports step (`judge.Support`): its bounds on the contrast past the offset and the
# yes/no lean past the floor, searched on this grid, at most one added wrong answer per training set.
SUPPORT_GRID = [(a / 10, b / 10) for a in range(0, 11) for b in range(-2, 10)]


def support_answer(p: Open, step: tuple[float, float]) -> Relation:
    slack = J.DRIFT_SLACK
    ok = p.open and not p.flipped and p.agree[0] > step[0] + slack and p.agree[1] > step[1] + slack
    return "supports" if ok else p.now


def support_fit(by: dict[str, list[Open]], train: list[str]) -> tuple[float, float] | None:
    best: tuple[tuple[int, int], tuple[float, float]] | None = None
    for step in SUPPORT_GRID:
        gain = wrong = 0
        ok = True
        for k in train:
            answers = [support_answer(p, step) for p in by[k]]
            w = sum(a != p.now and a != p.expected for a, p in zip(answers, by[k]))
            ok = ok and w <= 1
            gain += sum((a == p.expected) - (p.now == p.expected) for a, p in zip(answers, by[k]))
            wrong += w
        if ok and gain > 0 and (best is None or (gain - wrong, -wrong) > best[0]):
            best = ((gain - wrong, -wrong), step)
    return None if best is None else best[1]


def report(cache: Path, seconds: list[J.Method], blind: list[Path]) -> int:
    ps = pairs(cache, seconds, blind)
    by: dict[str, list[Open]] = {}
    for p in ps:
        by.setdefault(p.name, []).append(p)
    names = list(by)
    unseen = [p.stem.replace("judge_", "") for p in blind]
    tuning = [k for k in names if k not in unseen]
    print("| judge | " + " | ".join(f"{k} ({len(by[k])}{', blind' if k in unseen else ''})" for k in names) + " |")
    print("|---|" + "---:|" * len(names))

    def cell(k: str, answers: list[Relation]) -> str:
        n = len(by[k])
        right = sum(a == p.expected for a, p in zip(answers, by[k]))
        wrong = sum(a not in ("unrelated", p.expected) for a, p in zip(answers, by[k]))
        related = [(a, p) for a, p in zip(answers, by[k]) if p.expected != "unrelated"]
        abst = sum(a == "unrelated" for a, _ in related)
        return f"{right / n:.0%} / {wrong / n:.1%} ({wrong}) / {abst / len(related):.0%}"
    print("| 1.5B, rules first, then the shipped margin (agree; start of the wave) | "
          + " | ".join(cell(k, [p.now for p in by[k]]) for k in names) + " |")
    full = support_fit(by, tuning)
    cells = []
    for k in names:
        step = full if k in unseen else support_fit(by, [t for t in tuning if t != k])
        answers = [p.now if step is None else support_answer(p, step) for p in by[k]]
        gain = sum((a == p.expected) - (p.now == p.expected) for a, p in zip(answers, by[k]))
        added = sum(a != p.now and a != p.expected for a, p in zip(answers, by[k]))
        cells.append(cell(k, answers) + f" ({gain:+d}, wrong {added:+d})")
    print("| 1.5B + agree's own supports step, LOSO (at most one added wrong answer per training set) | " + " | ".join(cells) + " |")
    print(f"agree's own supports step fitted on every tuning set: contrast > {full[0] if full else None}, lean > "
          f"{full[1] if full else None} (each + slack {J.DRIFT_SLACK:.2f})", file=sys.stderr)
    shipped_now = as_judged(cache, blind, shipped())
    print("| **1.5B as shipped now** (rules first, then agree's margin, then agree's own supports step where the margin "
          "abstains: data/calibration.json, through judge.decide; its numbers fitted on the fourteen sets of wave 18) | "
          + " | ".join(cell(k, shipped_now[k]) for k in names) + " |")
    if "query" in seconds:
        now = as_judged(cache, blind, frozen())
        print("| **1.5B, the frozen candidate** (judge.decide with the shipped record's agree numbers and FROZEN's query "
              "step, rules first; its numbers fitted on the fourteen sets of wave 18, so in-sample there) | "
              + " | ".join(cell(k, now[k]) for k in names) + " |")
    summary, wrong_lines = [], []
    for method, (family, xs) in ((m, f) for m in seconds for f in FAMILIES.items()):
        steps = grid([p for p in ps if p.name in tuning], method, xs)
        for as_written in (False, True):
            for criterion in CRITERIA:
                cells, ups, downs, beyond = [], 0, 0, 0
                full = fit(by, tuning, method, criterion, as_written, steps)
                for k in names:
                    # a tuning set: fitted on the other tuning sets (LOSO); a blind set: on every tuning set
                    step = full if k in unseen else fit(by, [t for t in tuning if t != k], method, criterion, as_written, steps)
                    answers = [p.now if step is None else step_answer(p, method, step, as_written) for p in by[k]]
                    gain, added = (0, 0) if step is None else effect(by[k], method, step, as_written)
                    ups, downs, beyond = ups + (gain > 0), downs + (gain < 0), beyond + (added > 1)
                    cells.append(cell(k, answers) + f" ({gain:+d}, wrong {added:+d})")
                    if (method, family, as_written, criterion) == FIXED:
                        wrong_lines += [f"- {k}: expected {p.expected}, step {a}, (direction, unknown) {p.second[method]}, "
                                        f"agree's contrast {p.agree[0]:+.2f}" for p, a in zip(by[k], answers)
                                        if a != p.now and a != p.expected]
                title = f"{method}{family}, supports-only, {'as-written pairs' if as_written else 'every pair'}, LOSO {criterion}"
                print(f"| {title} | " + " | ".join(cells) + " |")
                steps_text = "never" if full is None else f"direction > {full[0]:.2f}, unknown < {full[1]:.2f}, contrast > {full[2]:.2f}"
                summary.append(f"{title}: up {ups} / down {downs} / wrong up by 2 or more {beyond} (sets scored: {len(names)}); "
                               f"fitted on every tuning set: {steps_text} (each + slack {J.DRIFT_SLACK:.2f})")
    print("\n" + "\n".join(summary))
    print(f"\nwrong answers the fixed variant ({' '.join(map(str, FIXED))}) adds, LOSO (blind: fitted on every tuning set):")
    print("\n".join(wrong_lines) or "none")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--score", action="store_true")
    ap.add_argument("--sets", default="calibration,report," + ",".join(p.stem.replace("judge_", "") for p in HELDOUT))
    ap.add_argument("--second", default="query,shots")
    ap.add_argument("--blind", type=Path, action="append", default=[], metavar="FILE")
    args = ap.parse_args(argv)
    if args.score:
        return score(args.cache, [] if args.blind else args.sets.split(","), args.second.split(","), args.model,  # type: ignore[arg-type]
                     args.blind)
    return report(args.cache, args.second.split(","), args.blind)


if __name__ == "__main__":
    sys.exit(main())
