"""Wave 10 of the reflection judge: `query`, a second question on the pairs `agree` abstains on.

`query` decides as `agree`; where that abstains it asks the opinion as a question about the FACT
alone ("Based on the FACT, is it true now that Peter prefers short meetings? yes / no / unknown",
`judge.query`) and answers "supports" where the yes-vs-no log-odds clear a threshold and the
"unknown" log-odds stay under a bound (`judge.Recheck`; one-sided: a "no" is never a contradiction).
As in a reflection, the query is asked only of the pairs the fitted `agree` leaves open.

Every number is fitted on the **calibration half of the shipped cases only** (`check.choose`, as
`gitmem model check` fits it) and measured unchanged on the report half and each `--heldout` file,
beside `agree` in the same run. Also printed:

- `query, two-sided` (dropped): the same second step with a "contradicts" side too (a band
  [lean - margin, lean + margin] on the yes-vs-no log-odds), fitted the same way;
- a leave-sets-out check: the second step's two numbers fitted on each set alone (the most right
  answers with no new wrong one; `agree`'s numbers stay the shipped fit) and measured on the others.

    .venv/bin/python bench/judge_wave10.py --model M --cache bench/out/judge-cache.sqlite \\
        --heldout bench/judge_heldout2.jsonl ... [--kinds]
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, LlamaModel, resolve_model_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_wave8 import _fmt, answered, arguments, kinds  # noqa: E402  (bench scripts import each other by path)


def with_query(model: J.Scorer, scored: list[C.Scored], first: C.Fit) -> list[C.Scored]:
    """`scored` (asked `agree`'s questions) as method `query`: the query asked where `first` abstains,
    by the product's own `check.ask_second` (`query` decides first as `agree`)."""
    as_query = [s if s.gated else s._replace(scores={"agree": s.scores["agree"], "query": s.scores["agree"]})
                for s in scored]
    return C.ask_second(model, as_query, "query", first.margin, first.offset, first.floor)


def _open(scored: Sequence[C.Scored], first: C.Fit) -> list[tuple[float, float, str]]:
    """(yes-vs-no, unknown, expected label as asked) of the pairs `first` leaves open."""
    out = []
    for s in scored:
        if s.gated:
            continue
        sc = s.scores["query"]
        if sc.query_yes is None or sc.query_unknown is None:
            continue
        if J._decide(sc, "agree", first.margin, first.offset, first.floor).relation == "unrelated":
            out.append((sc.query_yes, sc.query_unknown, J.turn(s.case.expected) if sc.flipped else s.case.expected))
    return out


def two_sided(scored: Sequence[C.Scored], first: C.Fit) -> tuple[float, float, float] | None:
    """The dropped two-sided second step: (lo, hi, unknown bound) with the most right answers and no
    more wrong answers in all than CALIBRATION_WRONG allows (the first step's count); ties to the wider band."""
    pairs = _open(scored, first)
    n, wrong0 = len(scored), round(first.metrics.wrong_direction * len(scored))
    ys = sorted({y for y, _, _ in pairs})
    ends = C._midpoints(ys) if ys else []
    best: tuple[int, float] = (0, 0.0)
    chosen = None
    for bound in C._midpoints(sorted({u for _, u, _ in pairs}))[1:] if pairs else []:
        live = [(y, e) for y, u, e in pairs if u < bound]
        for i, lo in enumerate(ends):
            for hi in ends[i:]:
                right = sum(1 for y, e in live if (y < lo and e == "contradicts") or (y > hi and e == "supports"))
                wrong = sum(1 for y, e in live if (y < lo and e != "contradicts") or (y > hi and e != "supports"))
                if wrong0 + wrong <= C.CALIBRATION_WRONG * n and (right, hi - lo) > best:
                    best, chosen = (right, hi - lo), (lo, hi, bound)
    return chosen


def two_sided_metrics(scored: Sequence[C.Scored], first: C.Fit, band: tuple[float, float, float] | None) -> C.Metrics:
    """`scored` decided by `first` and, where it abstains, by the two-sided `band`."""
    def answer(s: C.Scored) -> J.Relation:
        if s.gated:
            return "unrelated"
        sc = s.scores["query"]
        got = J._decide(sc, "agree", first.margin, first.offset, first.floor).relation
        if got == "unrelated" and band is not None and sc.query_yes is not None and sc.query_unknown is not None:
            lo, hi, bound = band
            if sc.query_unknown < bound and not lo <= sc.query_yes <= hi:
                got = "supports" if sc.query_yes > hi else "contradicts"
        return J.turn(got) if sc.flipped else got
    return answered(scored, answer)


def no_new_wrong(scored: Sequence[C.Scored], first: C.Fit) -> J.Recheck:
    """The one-sided second step with the most right answers and no wrong one on `scored` (leave-sets-out)."""
    pairs = _open(scored, first)
    best: tuple[int, float, float] = (0, -math.inf, 0.0)
    chosen = J.NO_RECHECK
    ys = C._midpoints(sorted({y for y, _, _ in pairs})) if pairs else []
    for bound in C._midpoints(sorted({u for _, u, _ in pairs}))[1:] if pairs else []:
        for yes in ys:
            got = [e for y, u, e in pairs if u < bound and y > yes]
            right = got.count("supports")
            if right and right == len(got) and (right, yes, -bound) > best:
                best, chosen = (right, yes, -bound), J.Recheck(yes, bound)
    return chosen


def main(argv: list[str] | None = None) -> int:
    args = arguments(__doc__, "agree,query").parse_args(argv)
    llama = LlamaModel(resolve_model_path(None, args.model))
    model = CachedModel(llama, args.cache)
    name = llama.name.split(":")[0]
    sets = {"shipped": C.load_cases()} | {p.stem: C.load_cases(p) for p in args.heldout}
    cpu0 = time.process_time()
    asked = {k: C.score_cases(model, v, ["agree"], polarity=True) for k, v in sets.items()}
    shipped = asked.pop("shipped")
    runs = {"calibration": [s for s in shipped if s.case.split == "calibration"],
            "report": [s for s in shipped if s.case.split == "report"], **asked}
    first = C.choose(runs["calibration"], ["agree"])
    runs = {k: with_query(model, v, first) for k, v in runs.items()}
    speed = llama.stats.prompt_tokens / llama.stats.seconds if llama.stats.seconds else 0.0
    print(f"\n{name}: {llama.stats.calls} prompts scored by the model in this run, {time.process_time() - cpu0:.0f} CPU s "
          f"({llama.stats.prompt_tokens} prompt tokens, {speed:.1f} tokens/s)\n")
    columns = list(runs)
    fit = C.choose(runs["calibration"], ["agree", "query"])
    print("| way of deciding | " + " | ".join(f"{k} ({len(v)})" for k, v in runs.items()) + " | fitted |")
    print("|---|" + "---:|" * len(columns) + "---|")
    cells = [_fmt(C.metrics(runs[k], "agree", first.margin, first.offset, first.floor)) for k in columns]
    print("| agree | " + " | ".join(cells) + f" | margin {first.margin:.2f}, offset {first.offset:+.2f}, yes/no lean {first.floor:+.2f} |")
    cells = [_fmt(C.metrics(runs[k], fit.method, fit.margin, fit.offset, fit.floor, fit.recheck)) for k in columns]
    print(f"| chosen: {fit.method} | " + " | ".join(cells) + f" |{J.describe_rule(fit.method, fit.offset, fit.floor, True, fit.recheck)} |")
    band = two_sided(runs["calibration"], first)
    cells = [_fmt(two_sided_metrics(runs[k], first, band)) for k in columns]
    print("| query, two-sided (dropped) | " + " | ".join(cells) + " | "  # the band, or none fitted
          + ("none" if band is None else
             f"contradicts below {band[0]:+.2f}, supports above {band[1]:+.2f}, unknown below {band[2]:+.2f}") + " |")
    for k in columns:
        own = no_new_wrong(runs[k], first)
        cells = [("**" if j == k else "") + _fmt(C.metrics(runs[j], "query", first.margin, first.offset, first.floor, own))
                 + ("**" if j == k else "") for j in columns]
        print(f"| query fitted on {k} alone | " + " | ".join(cells) + f" | yes above {own.yes:+.2f}, unknown below {own.unknown:+.2f} |")
    if args.kinds:
        for k in columns:
            for label, f in (("agree", first), (fit.method, fit)):
                rows = kinds(runs[k], f.method, f)
                print(f"| by kind, {k}, {label} | " + "; ".join(f"{kind} {r[0]}/{r[1]}/{r[2]}" for kind, r in sorted(rows.items())) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
