"""Wave 20 of the reflection judge: the fixed few-shot block as a second step, over every labelled set (issue 15).

- `--score --model M [--sets a,b,...]`: the `shots` question (`judge.SHOTS_SYSTEM`: the labels question
  under a fixed block of invented worked examples) asked of every pair the model's first step leaves
  open (gate passed, no rule; the 1.5B: the shipped record's `agree` abstains; SmolLM2, whose record
  never decides: every such pair), set by set, into the score cache. The block's KV state is kept
  once per model load (`LlamaModel._save_prefix`); per set it prints the prompts asked, the prompt
  tokens evaluated per prompt, the prefix restores and the prompt tokens/s. Stopping it loses nothing.
- report (cache only; only sets whose open pairs are all scored): per set, accuracy / wrong direction
  (count) / abstain of the plain baseline, the shipped records and the variants, each fitted
  leave-one-set-out (LOSO: a set judged by the thresholds fitted on the other scored sets):
  `shots` in place of the query step (method `shots`: both ways), the query step then `shots`
  where the query leaves a pair open, and `shots` one way (supports only); SmolLM2 with `shots`.

    nice -n 19 .venv/bin/python bench/judge_wave20.py --score --model M --cache C [--sets heldout15,heldout14]
    nice -n 19 .venv/bin/python bench/judge_wave20.py --cache C
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import NamedTuple

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, InvalidModelOutput, LlamaModel
from gitmem.reflect.prompts import Relation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_wave8 import _fmt  # noqa: E402  (bench scripts import each other by path)
from judge_wave13 import NAME, _CacheOnly  # noqa: E402
from judge_wave15 import OldScheme, baseline  # noqa: E402
from judge_wave17 import SMOL  # noqa: E402
from judge_wave18 import FROZEN, shipped  # noqa: E402
from judge_wave19 import all_sets, cell, parser  # noqa: E402

Shots = tuple[float, float]  # `judge.second_step` of the shots question: (supports vs contradicts, unrelated vs the likelier)


class Pair(NamedTuple):
    case: C.Case
    now: Relation  # the shipped record's answer (rules first; the 1.5B: agree's margin, then the FROZEN query)
    open: bool  # gate passed, no rule, the model's first step abstains (the shots question is asked)
    agree: Relation  # the answer before any second step
    contrast: float  # agree's labels contrast past the offset (0: not scored)
    flipped: bool
    shots: Shots | None
    by_model: bool = False  # `agree` is the model's verdict (gate passed, no rule, agree decides)
    negdiff: float | None = None  # `judge.negation_contrast` where the negation was asked (the polarity check's number)


def _open(model: J.Scorer, cases: list[C.Case], smol: bool) -> list[tuple[C.Case, J.PairScores | None, Relation]]:
    """Each case with its agree scores (None: gated or ruled) and agree's answer (a rule's where one decides)."""
    cal = shipped()
    out: list[tuple[C.Case, J.PairScores | None, Relation]] = []
    if smol:  # its record never decides: every pair the gate passes and no rule decides is open
        for c in cases:
            ruled = J.ruled(c.fact, c.opinion) if J.relevant(c.fact, c.opinion).passed else None
            passed = ruled is None and J.relevant(c.fact, c.opinion).passed
            out.append((c, J.PairScores() if passed else None, "unrelated" if ruled is None else ruled.relation))
        return out
    for s in C.score_cases(model, cases, ["agree"], second=False):
        ruled = None if s.gated else J.ruled(s.case.fact, s.case.opinion)
        sc = s.scores.get("agree")
        if sc is None or ruled is not None:
            out.append((s.case, None, "unrelated" if ruled is None else ruled.relation))
        else:
            out.append((s.case, sc, J.decide(sc, "agree", cal.margin, cal.offset, cal.floor, slack=cal.slack).relation))
    return out


def load(cache: Path, name: str, smol: bool) -> dict[str, list[Pair]]:
    """Per set, its pairs; a set with an open pair whose shots question is not in the cache is left out."""
    cal = shipped()
    model = CachedModel(_CacheOnly(name), cache)  # type: ignore[arg-type]
    out: dict[str, list[Pair]] = {}
    for set_name, cases in all_sets([]).items():
        pairs: list[Pair] = []
        try:
            for case, sc, a in _open(model, cases, smol):
                if sc is None or a != "unrelated":
                    by_model = sc is not None and J.ruled(case.fact, case.opinion) is None
                    pairs.append(Pair(case, a, False, a, 0.0, bool(sc and sc.flipped), None, by_model,
                                      _negdiff(model, case, sc) if by_model and sc is not None else None))
                    continue
                asked = J.ask(model, case.fact, case.opinion, "shots")
                shots, now, contrast = J.second_step(asked), a, 0.0
                if not smol:
                    contrast = J.contrast(sc) - cal.offset
                    q = J.ask(model, case.fact, case.opinion, "query")
                    now = J.decide(J.merge(sc, q), "query", cal.margin, cal.offset, cal.floor, recheck=FROZEN, slack=cal.slack).relation
                pairs.append(Pair(case, now, True, a, contrast, asked.flipped, shots, False, None if smol else _negdiff(model, case, sc)))
        except InvalidModelOutput:
            continue
        out[set_name] = pairs
    return out


def _negdiff(model: J.Scorer, case: C.Case, sc: J.PairScores) -> float | None:
    try:
        return J.negation_contrast(J.merge(sc, J.ask(model, case.fact, case.opinion, "negated")))
    except InvalidModelOutput:
        return None


# The open pairs whose negation `--score-negated` asks: where a shots step could give a verdict
# with any threshold `CHECKED_GRID` allows (supports above -0.1, contradicts below -1.4, slack included).
LOOSE_YES, LOOSE_NO = -0.1, -1.4


def score_negated(cache: Path, model_path: Path, names: list[str]) -> int:
    """The negation of the open pairs a shots step could decide, on sets whose shots are all scored."""
    llama = LlamaModel(model_path)
    with CachedModel(llama, cache) as model:
        big = load(cache, NAME, smol=False)
        for name in names or list(big):
            if name not in big:
                continue
            t0, misses0 = time.perf_counter(), model.misses
            for p in big[name]:
                if p.open and p.shots is not None and (p.shots[0] > LOOSE_YES or p.shots[0] < LOOSE_NO):
                    J.ask(model, p.case.fact, p.case.opinion, "negated")
            print(f"{name}: {model.misses - misses0} negations asked, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return 0


def score(cache: Path, model_path: Path, names: list[str]) -> int:
    llama = LlamaModel(model_path)
    smol = "SmolLM2" in llama.name
    print(llama.runtime, file=sys.stderr, flush=True)
    sets = all_sets([])
    with CachedModel(llama, cache) as model:
        for name in names or list(sets):
            t0, misses0 = time.perf_counter(), model.misses
            tokens0, seconds0, loads0 = llama.stats.prompt_tokens, llama.stats.seconds, llama.stats.prefix_loads
            for case, sc, a in _open(model, sets[name], smol):
                if sc is not None and a == "unrelated":
                    J.ask(model, case.fact, case.opinion, "shots")
            asked = model.misses - misses0
            tokens, seconds = llama.stats.prompt_tokens - tokens0, llama.stats.seconds - seconds0
            print(f"{name}: {asked} prompts asked, {tokens} prompt tokens evaluated ({tokens / max(asked, 1):.0f} per prompt), "
                  f"{llama.stats.prefix_loads - loads0} prefix restores, {tokens / seconds if seconds else 0:.1f} prompt tokens/s, "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return 0


CHECK = J.Consistency(supports=-0.21, contradicts=0.21)  # w19/judge21's polarity check as fitted on all sixteen sets (this wave)


def passes(p: Pair, asked: Relation) -> bool:
    """The polarity check (`CHECK`, with the slack) of a model verdict about the form asked."""
    if p.negdiff is None:
        return False
    slack = J.DRIFT_SLACK
    return p.negdiff > CHECK.supports + slack if asked == "supports" else p.negdiff < CHECK.contradicts - slack


def checked_agree(p: Pair) -> Relation:
    """agree's answer with the polarity check on its model verdicts."""
    if not p.by_model or p.agree == "unrelated":
        return p.agree
    return p.agree if passes(p, J.turn(p.agree) if p.flipped else p.agree) else "unrelated"


def stepped(p: Pair, r: J.Recheck, base: Relation, check: bool = False) -> Relation:
    """`base`, or on an open pair `base` leaves open, the shots step's answer as `judge._recheck` reads
    it (with `check`, kept only where the polarity check passes)."""
    if not p.open or p.shots is None or base != "unrelated":
        return base
    slack = J.DRIFT_SLACK
    d, u = p.shots
    if not u < r.unknown - slack:
        return base
    got: Relation = "unrelated"
    if d > r.yes + slack and (r.contrast <= J.NO_FLOOR or p.contrast > r.contrast + slack):
        got = "supports"
    elif d < r.no - slack:
        got = "contradicts"
    if check and got != "unrelated" and not passes(p, got):
        return base
    return J.turn(got) if p.flipped else got


def grid(ps: list[Pair], two_sided: bool) -> list[J.Recheck]:
    ds = sorted(p.shots[0] for p in ps if p.shots is not None)
    us = sorted(p.shots[1] for p in ps if p.shots is not None)
    if not ds:
        return []
    q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))]  # noqa: E731
    ys = sorted({q(ds, i / 30) for i in range(10, 30)})
    ns = [J.NO_FLOOR] + (sorted({q(ds, i / 30) for i in range(0, 12)}) if two_sided else [])
    return [J.Recheck(yes=y, unknown=q(us, j / 8) if j < 8 else 1e9, no=n) for y in ys for n in ns if n < y for j in range(1, 9)]


def fit(by: dict[str, list[Pair]], train: list[str], options: list[J.Recheck], base: dict[str, list[Relation]],
        check: bool = False) -> J.Recheck:
    """The step with the most right answers gained net of wrong ones over `train`, adding at most one
    wrong answer to any training set and with at most a tenth of its verdicts wrong; none when none gains."""
    best: tuple[tuple[int, int], J.Recheck] = ((0, 0), J.NO_RECHECK)
    for r in options:
        gain = wrong = 0
        ok = True
        for k in train:
            added = 0
            for p, b in zip(by[k], base[k]):
                a = stepped(p, r, b, check)
                if a != b:
                    gain += (a == p.case.expected) - (b == p.case.expected)
                    w = a != p.case.expected
                    wrong += w
                    added += w
            if added > 1:
                ok = False
                break
        if ok and gain > 0 and wrong <= 0.1 * (gain + wrong) and (gain - wrong, -wrong) > best[0]:
            best = ((gain - wrong, -wrong), r)
    return best[1]


def loso(by: dict[str, list[Pair]], base: dict[str, list[Relation]], two_sided: bool,
         check: bool = False) -> tuple[dict[str, list[Relation]], dict[str, J.Recheck]]:
    names = list(by)
    options = grid([p for k in names for p in by[k]], two_sided)
    if check:  # only steps whose verdicts all had their negation asked (`score_negated`)
        options = [r for r in options if r.yes + J.DRIFT_SLACK >= LOOSE_YES and r.no - J.DRIFT_SLACK <= LOOSE_NO]
    fits = {k: fit(by, [t for t in names if t != k], options, base, check) for k in names}
    return {k: [stepped(p, fits[k], b, check) for p, b in zip(by[k], base[k])] for k in names}, fits


def _describe(r: J.Recheck) -> str:
    if r.yes >= J.NEVER:
        return "no step"
    no = "" if r.no <= J.NO_FLOOR else f", contradicts < {r.no:.2f}"
    return f"supports > {r.yes:.2f}{no}, unrelated < {r.unknown:.2f}"


def report(cache: Path) -> int:
    big = load(cache, NAME, smol=False)
    small = load(cache, SMOL, smol=True)
    names = list(big)
    print(f"1.5B: sets with every open pair scored: {', '.join(names)}", file=sys.stderr)
    print(f"SmolLM2: sets with every open pair scored: {', '.join(small)}", file=sys.stderr)
    print("| judge | " + " | ".join(f"{k} ({len(big[k])})" for k in names) + " |")
    print("|---|" + "---:|" * len(names))

    def row(title: str, by: dict[str, list[Pair]], answers: dict[str, list[Relation]], ref: dict[str, list[Relation]] | None = None) -> None:
        cells = [cell(by[k], answers[k], None if ref is None else ref[k]) if k in answers else "not scored"  # type: ignore[arg-type]
                 for k in names]
        print(f"| {title} | " + " | ".join(cells) + " |")

    now = {k: [p.now for p in big[k]] for k in names}
    agree = {k: [p.agree for p in big[k]] for k in names}
    row("1.5B shipped (rules, agree's margin, the FROZEN query step)", big, now)
    row("1.5B, agree alone (no second step)", big, agree, now)
    plain = {
        "1.5B, shots in place of the query step, both ways (method `shots`), LOSO": (agree, True),
        "1.5B, shots in place of the query step, supports only, LOSO": (agree, False),
        "1.5B, the query step then shots where it leaves a pair open, both ways, LOSO": (now, True),
        "1.5B, the query step then shots, supports only, LOSO": (now, False),
    }
    agree_checked = {k: [checked_agree(p) for p in big[k]] for k in names}
    row("1.5B, agree with the polarity check (-0.21 / +0.21)", big, agree_checked, now)
    variants: dict[str, tuple[dict[str, list[Relation]], bool, bool]] = {
        **{t: (b, two, False) for t, (b, two) in plain.items()},
        "1.5B, shots in place of the query step, both ways, every model verdict under the polarity check, LOSO": (agree_checked, True, True),
        "1.5B, shots in place of the query step, supports only, under the polarity check, LOSO": (agree_checked, False, True),
    }
    for title, (base, two, chk) in variants.items():
        answers, fits = loso(big, base, two, chk)
        row(title, big, answers, now)
        print(f"{title}: per fold " + "; ".join(f"{k}: {_describe(v)}" for k, v in fits.items()), file=sys.stderr)
        for k in names:
            for p, a, b in zip(big[k], answers[k], now[k]):
                if a != b and a != p.case.expected:
                    print(f"  wrong: {k} / {p.case.expected} -> {a} / {p.case.fact} / {p.case.opinion}", file=sys.stderr)
    smol_rules = {k: [p.now for p in small[k]] for k in small}
    row("SmolLM2 (default) shipped: the rules alone", small, smol_rules)
    if small:
        answers, fits = loso(small, smol_rules, True)
        row("SmolLM2 + shots, both ways, LOSO over its scored sets", small, answers, smol_rules)
        print("SmolLM2 + shots: per fold " + "; ".join(f"{k}: {_describe(v)}" for k, v in fits.items()), file=sys.stderr)

    def base_cell(k: str) -> str:
        cases = all_sets([])[k]
        b = baseline(CachedModel(_CacheOnly(NAME), cache), cases) or baseline(OldScheme(_CacheOnly(NAME), cache), cases)  # type: ignore[arg-type]
        return "not scored" if b is None else _fmt(b)
    print("| baseline (1.5B): no gate, best label, no margin | " + " | ".join(base_cell(k) for k in names) + " |")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--score-negated", action="store_true", help="ask the negation of the open pairs a shots step could decide")
    ap.add_argument("--sets", default="", help="comma-separated set names to score, in this order (default: every set)")
    args = ap.parse_args(argv)
    if args.score_negated:
        return score_negated(args.cache, args.model, [s for s in args.sets.split(",") if s])
    if args.score:
        return score(args.cache, args.model, [s for s in args.sets.split(",") if s])
    return report(args.cache)


if __name__ == "__main__":
    sys.exit(main())
