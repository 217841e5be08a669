"""Wave 16 of the reflection judge: a calibrated decision over several scores instead of one margin.

From the score cache only (no model; `bench/judge_wave15.py --score` fills it), for
Qwen2.5-Coder-1.5B Q4_K_M (bench only), every labelled set (the shipped calibration and report
halves, bench/judge_heldout2..11.jsonl), accuracy / wrong direction / abstain of:

- the shipped margin record as main reads it on this host (`agree`, slack 0.10);
- `learned` (bench/judge_learned.py): a multinomial logistic model over `agree`'s four numbers
  (labels contrast, unrelated log-odds, yes to each yes/no question; optionally the gate's overlap)
  with an abstain threshold, fitted on the calibration half alone (what `gitmem model check` could
  fit) and leave-one-set-out (fitted on the other sets, reported on the one left out), its threshold
  the most answers whose wrong-direction rate on the training sets stays within a bound (pooled at
  most `check.CALIBRATION_WRONG`, or each set at most 3% / 4%);
- a two-stage rule (related? then which way?), two logistic models and two thresholds;
- the plain baseline (no gate, best label, no margin) where its scores are cached (`--baseline SETS`
  asks them: one prompt per case, most already cached as `agree`'s labels question).

`--blind FILE`: the rule fixed before blind set 12 (BLIND_PER_SET) fitted on every labelled set
and judged on FILE, whose `agree` scores must be in the cache (bench/reflect_judge.py with the
1.5B asks exactly these prompts).

    nice -n 19 .venv/bin/python bench/judge_wave16.py --cache C
    nice -n 19 .venv/bin/python bench/judge_wave16.py --cache C --blind bench/judge_heldout12.jsonl
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, InvalidModelOutput, LlamaModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_wave8 import _fmt  # noqa: E402  (bench scripts import each other by path)
from judge_wave13 import NAME, _CacheOnly, load_sets  # noqa: E402
from judge_wave14 import MODEL  # noqa: E402
from judge_wave15 import HELDOUT, OldScheme, baseline  # noqa: E402
import judge_learned as L  # noqa: E402

Featurize = Callable[[C.Scored], list[float]]


def scores_only(s: C.Scored) -> list[float]:
    sc = s.scores["agree"]
    assert sc.labels is not None and sc.yes_supports is not None and sc.yes_contradicts is not None
    sup, con, unr = sc.labels
    return [sup - con, unr - max(sup, con), sc.yes_supports, sc.yes_contradicts]


def with_gate(s: C.Scored) -> list[float]:
    f, o = J.subject(s.case.fact), J.subject(s.case.opinion)
    sim = J.similarity(s.case.fact, s.case.opinion) or 0.0
    return [*scores_only(s), float(len(f.stems & o.stems)), float(len(f.topics & o.topics)), sim]


def label(s: C.Scored) -> int:
    """The expected relation as asked (turned for a pair asked about the opinion's affirmative form)."""
    e = J.turn(s.case.expected) if s.scores["agree"].flipped else s.case.expected
    return L.CLASSES.index(e)


def predict(model: L.Linear, s: C.Scored, feat: Featurize, slack: float = 0.0) -> J.Relation:
    if s.gated:
        return "unrelated"
    rel, _ = L.decide(model, feat(s), slack)
    r: J.Relation = rel  # type: ignore[assignment]
    return J.turn(r) if s.scores["agree"].flipped else r


def fit(train: dict[str, list[C.Scored]], feat: Featurize, per_set: float | None) -> L.Linear:
    """The model on every gate-passing pair of `train`, and the lowest threshold (most answers) whose
    wrong-direction rate stays within the bound: pooled at most CALIBRATION_WRONG, or each set at
    most `per_set`; the best accuracy among those, ties to the higher threshold."""
    live = [s for ss in train.values() for s in ss if not s.gated]
    model = L.fit([feat(s) for s in live], [label(s) for s in live])
    # each live pair: how far its best relation leads (threshold 0), its set, whether that answer is
    # right, and whether it was expected unrelated (then an abstention is right)
    rows = []
    for k, ss in train.items():
        for s in ss:
            if not s.gated:
                x = feat(s)
                sup, con = L.lead(model, x, 0), L.lead(model, x, 1)
                a: J.Relation = "supports" if sup >= con else "contradicts"
                a = J.turn(a) if s.scores["agree"].flipped else a
                rows.append((max(sup, con), k, a == s.case.expected, s.case.expected == "unrelated"))
    sizes = {k: len(ss) for k, ss in train.items()}
    n = sum(sizes.values())
    unrelated = sum(s.case.expected == "unrelated" for ss in train.values() for s in ss)
    best: tuple[float, float] | None = None
    chosen = model._replace(threshold=1e9)
    for t in sorted({r[0] for r in rows}) + [1e9]:
        wrong = dict.fromkeys(sizes, 0)
        correct = unrelated
        for lead_, k, ok, unrel in rows:
            if lead_ >= t:  # answered
                wrong[k] += not ok
                correct += ok - unrel
        if (per_set is None and sum(wrong.values()) > C.CALIBRATION_WRONG * n) or (
                per_set is not None and max(wrong[k] / sizes[k] for k in sizes) > per_set):
            continue
        if best is None or (correct / n, t) > best:
            best, chosen = (correct / n, t), model._replace(threshold=t - 1e-6)
    return chosen


def binary(xs: Sequence[Sequence[float]], ys: Sequence[int]) -> L.Linear:
    """A two-class logistic model (ys 0 / 1) as the first two rows of a Linear (the second row 0)."""
    m = L.fit(xs, [2 * y for y in ys])  # the classes 0 and 2 of CLASSES; 1 has no example
    return m._replace(weights=(m.weights[0], m.weights[2]), bias=(m.bias[0], m.bias[2]))


def two_stage(train: dict[str, list[C.Scored]], feat: Featurize, per_set: float) -> Callable[[C.Scored], J.Relation]:
    """Related? (supports or contradicts against unrelated), then which way (among the related
    pairs only); answers where the first's log-odds clear t1 and the second's t2, the pair (t1, t2)
    with the best accuracy whose wrong-direction rate is at most `per_set` on every training set."""
    live = [s for ss in train.values() for s in ss if not s.gated]
    xs = [feat(s) for s in live]
    ys = [label(s) for s in live]
    rel = binary(xs, [int(y == 2) for y in ys])
    dirn = binary([x for x, y in zip(xs, ys) if y != 2], [int(y == 1) for y in ys if y != 2])

    def nums(s: C.Scored) -> tuple[float, float]:
        z, d = L.logits(rel, feat(s)), L.logits(dirn, feat(s))
        return z[0] - z[1], d[0] - d[1]  # related log-odds; supports-vs-contradicts log-odds

    rows = [(k, s, *nums(s)) for k, ss in train.items() for s in ss if not s.gated]
    rel_odds = np.array([r[2] for r in rows])
    dir_odds = np.array([r[3] for r in rows])
    # each pair's answer if answered, turned for a pair asked about the affirmative form
    answer = [J.turn(a) if s.scores["agree"].flipped else a
              for (_, s, _, d) in rows for a in [("supports" if d > 0 else "contradicts")]]
    ok = np.array([a == s.case.expected for a, (_, s, _, _) in zip(answer, rows)])
    unrel = np.array([s.case.expected == "unrelated" for (_, s, _, _) in rows])
    where = {k: np.array([r[0] == k for r in rows]) for k in train}
    sizes = {k: len(ss) for k, ss in train.items()}
    unrelated = sum(s.case.expected == "unrelated" for ss in train.values() for s in ss)
    grid1 = np.quantile(rel_odds, np.linspace(0, 1, 41))
    grid2 = np.quantile(np.abs(dir_odds), np.linspace(0, 1, 41))
    best: tuple[float, float, float] = (-1.0, 0.0, 0.0)
    ts = (1e9, 1e9)
    for t1 in grid1:
        for t2 in grid2:
            answered = (rel_odds >= t1) & (np.abs(dir_odds) >= t2)
            if max(float((answered & ~ok & where[k]).sum()) / sizes[k] for k in sizes) > per_set:
                continue
            correct = unrelated + int((answered & ok).sum()) - int((answered & unrel).sum())
            if (correct, t1, t2) > best:
                best, ts = (correct, float(t1), float(t2)), (float(t1), float(t2))

    def judge(s: C.Scored) -> J.Relation:
        if s.gated:
            return "unrelated"
        r, d = nums(s)
        if r < ts[0] or abs(d) < ts[1]:
            return "unrelated"
        a: J.Relation = "supports" if d > 0 else "contradicts"
        return J.turn(a) if s.scores["agree"].flipped else a
    return judge


# The rule fixed for a blind set (`--blind`), before set 12 was seen: the scores' four features, every
# labelled set as training data, each at most this wrong-direction rate (bench/RESULTS.md "Reflect judge, wave 16").
BLIND_PER_SET = 0.04


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--baseline", metavar="SETS", help="ask the 1.5B the plain baseline's question (labels, no gate, no polarity step) "
                                                       "for every case of these sets (comma-separated) into the cache, then stop")
    ap.add_argument("--blind", type=Path, help="a labelled set none of the fits saw: the fixed rule, fitted on every other set, judged on it")
    args = ap.parse_args(argv)
    cases = load_sets(HELDOUT)
    if args.baseline:
        with CachedModel(LlamaModel(MODEL), args.cache) as model:
            for k in args.baseline.split(","):
                t0, misses0 = time.perf_counter(), model.misses
                for c in cases[k]:
                    J.score_pair(model, c.fact, c.opinion, "labels", polarity=False)
                print(f"{k}: {len(cases[k])} cases, {model.misses - misses0} prompts asked, {time.perf_counter() - t0:.0f} s",
                      file=sys.stderr, flush=True)
        return 0
    if args.blind:
        cases["blind"] = C.load_cases(args.blind)
    new = CachedModel(_CacheOnly(NAME), args.cache)  # type: ignore[arg-type]
    sets: dict[str, list[C.Scored]] = {}
    for k, v in cases.items():
        try:
            sets[k] = C.score_cases(new, v, ["agree"], second=False)
        except InvalidModelOutput:
            print(f"{k}: not scored under the new scheme, left out", file=sys.stderr)
    names = ["blind"] if args.blind else list(sets)
    shipped = J.on_runtime(J.shipped_calibrations()[J.fingerprint(NAME)], "this host")
    print("| judge | " + " | ".join(f"{k} ({len(sets[k])})" for k in names) + " |")
    print("|---|" + "---:|" * len(names))

    def row(title: str, judged: Callable[[str], str]) -> None:
        print(f"| {title} | " + " | ".join(judged(k) for k in names) + " |")

    row(f"shipped margin (agree, slack {shipped.slack:.2f})", lambda k: _fmt(
        C.metrics(sets[k], "agree", shipped.margin, shipped.offset, shipped.floor, slack=shipped.slack)))

    def learned(title: str, feat: Featurize, per_set: float | None, loso: bool = True) -> None:
        def judged(k: str) -> str:
            train = {j: v for j, v in sets.items() if j != k and j != "blind"} if loso else {"calibration": sets["calibration"]}
            m = fit(train, feat, per_set)
            return _fmt(C.tally(sets[k], [predict(m, s, feat) for s in sets[k]])) + (f" (t {m.threshold:.2f})" if loso else "")
        row(title, judged)

    if args.blind:
        learned(f"learned, fitted on every labelled set, each at most {BLIND_PER_SET:.0%}", scores_only, BLIND_PER_SET)
    else:
        learned("learned, fitted on the calibration half (at most 2%, as `gitmem model check` fits)", scores_only, None, loso=False)
        learned("learned, fitted on the calibration half, at most 3%", scores_only, 0.03, loso=False)
        learned("learned, leave-one-set-out, pooled at most 2%", scores_only, None)
        learned("learned, leave-one-set-out, each training set at most 3%", scores_only, 0.03)
        learned(f"**learned, leave-one-set-out, each training set at most {BLIND_PER_SET:.0%}**", scores_only, BLIND_PER_SET)
        learned("learned + the gate's overlap, leave-one-set-out, pooled at most 2%", with_gate, None)
        learned("learned + the gate's overlap, leave-one-set-out, each at most 3%", with_gate, 0.03)
        for bound in (0.03, BLIND_PER_SET):
            def staged(k: str, bound: float = bound) -> str:
                judge = two_stage({j: v for j, v in sets.items() if j != k}, scores_only, bound)
                return _fmt(C.tally(sets[k], [judge(s) for s in sets[k]]))
            row(f"two-stage (related? then which way?), leave-one-set-out, each at most {bound:.0%}", staged)

    def base(k: str) -> str:
        b = baseline(new, cases[k])
        if b is not None:
            return _fmt(b)
        b = baseline(OldScheme(_CacheOnly(NAME), args.cache), cases[k])  # type: ignore[arg-type]
        return "not scored" if b is None else _fmt(b) + " (old scheme)"
    row("baseline: no gate, best label, no margin", base)
    final = fit({k: v for k, v in sets.items() if k != "blind"}, scores_only, BLIND_PER_SET)
    print(f"\nthe rule fitted on {', '.join(k for k in sets if k != 'blind')}: weights (contrast, unrelated, yes to supports, "
          f"yes to contradicts) {[[round(w, 3) for w in r] for r in final.weights]}, bias {[round(b, 3) for b in final.bias]}, "
          f"threshold {final.threshold:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
