"""Wave 8 of the reflection judge: new ways of deciding against the shipped one, on every labelled set.

For each model, every case of every set goes through the relevance gate and the pairs it lets
through are scored with each of `--methods` (through the score cache, so a re-run asks the model
only for prompts it has not answered). Each way of deciding is fitted on the **calibration half of
the shipped cases only** (`check.choose`, as `gitmem model check` fits it) and measured, unchanged,
on the shipped report half and on each `--heldout` file, side by side with the model's shipped
calibration (`data/calibration.json`) in the same run. Derived variants (no extra model call) are
fitted the same way:

- `negate/alone`: `negate`'s direction (the labels contrast on the opinion minus that on its
  opposite) without its yes/no framing;
- `negate/both`: `negate/alone`, and only where the two labels questions each point the right way
  on their own (the opinion's contrast past the lean one way, the opposite's the other way);
- `negate/sup`: `negate/alone` with only the two "supports" log-probabilities (opinion against opposite);
- `agree with negate`, `split` / `both` / `either`: the two fitted judges combined (`combined`).

    .venv/bin/python bench/judge_wave8.py --model M --cache bench/out/judge-cache.sqlite \\
        --methods agree,negate --heldout bench/judge_heldout2.jsonl --heldout bench/judge_heldout3.jsonl [--kinds]

Prints Markdown tables: accuracy / wrong direction (count) / abstain per set, and pairs scored per CPU second.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, LlamaModel, resolve_model_path


def _fmt(m: C.Metrics) -> str:
    wrong = round(m.wrong_direction * m.cases)
    return f"{m.accuracy:.0%} / {m.wrong_direction:.1%} ({wrong}) / {m.abstain:.0%}"


Rewrite = Callable[[J.PairScores], J.PairScores | None]


def _derived(scored: Sequence[C.Scored], source: str, as_method: J.Method, rewrite: Rewrite) -> list[C.Scored]:
    """`scored` with `as_method`'s scores built from `source`'s by `rewrite` (None: the pair lacks them)."""
    out = []
    for s in scored:
        if s.gated or source not in s.scores:
            out.append(C.Scored(s.case, s.gated, {}) if not s.gated else s)
            continue
        new = rewrite(s.scores[source])
        out.append(C.Scored(s.case, False, {as_method: new} if new is not None else {}))
    return out


def _as_contrast(d: float) -> tuple[float, float, float]:
    """A labels triple whose contrast is `d` (for fitting a derived direction with contrast's machinery)."""
    return (0.0, -d, -50.0) if d >= 0 else (d, 0.0, -50.0)


def lean(scored: Sequence[C.Scored], method: str) -> float:
    """The median over the live pairs of the midpoint of the contrasts on the opinion and on its
    opposite: where a consistent model's two answers sit on either side of."""
    mids = sorted((J.contrast(p) + p.negated[0] - p.negated[1]) / 2 for s in scored if not s.gated and method in s.scores
                  for p in [s.scores[method]] if p.negated is not None)
    return mids[len(mids) // 2] if mids else 0.0


def variants(scored: Sequence[C.Scored], methods: Sequence[str], leans: dict[str, float]) -> dict[str, tuple[J.Method, list[C.Scored]]]:
    """name -> (the method whose machinery decides it, the cases with its scores). `leans`: per
    method, the calibration half's `lean`."""
    out: dict[str, tuple[J.Method, list[C.Scored]]] = {m: (m, list(scored)) for m in methods}  # type: ignore[misc]
    if "negate" in methods:
        def alone(p: J.PairScores) -> J.PairScores:
            return J.PairScores(labels=_as_contrast(J.negation_contrast(p)))
        out["negate/alone"] = ("contrast", _derived(scored, "negate", "contrast", alone))

        def both(p: J.PairScores) -> J.PairScores:
            # `likely`'s machinery: its direction is the negation contrast; its `bears` says how far
            # both questions point the same way on their own: the opinion's contrast above the
            # lean, the opposite's below it (or the other way round), fitted as a floor
            assert p.labels is not None and p.negated is not None
            c, n = J.contrast(p), p.negated[0] - p.negated[1]
            return J.PairScores(likely=c - n, bears=abs(c - n) / 2 - abs((c + n) / 2 - leans["negate"]))
        out["negate/both"] = ("likely", _derived(scored, "negate", "likely", both))

        def sup(p: J.PairScores) -> J.PairScores:
            assert p.labels is not None and p.negated is not None
            return J.PairScores(labels=_as_contrast(p.labels[0] - p.negated[0]))
        out["negate/sup"] = ("contrast", _derived(scored, "negate", "contrast", sup))
    return out


def combined(scored: Sequence[C.Scored], fa: C.Fit, fn: C.Fit, mode: str) -> C.Metrics:
    """`agree` and `negate`, each with its own fit on the calibration half, combined without fitting
    anything more: `split` takes "supports" from agree and "contradicts" from negate (both at once:
    abstain); `both` answers only where the two give the same verdict; `either` answers where one
    abstains and the other decides, or both agree (opposite verdicts: abstain)."""
    def answer(s: C.Scored) -> J.Relation:
        if s.gated:
            return "unrelated"
        a = J.decide(s.scores["agree"], "agree", fa.margin, fa.offset, fa.floor).relation
        n = J.decide(s.scores["negate"], "negate", fn.margin, fn.offset, fn.floor).relation
        if mode == "split":
            sup, con = a == "supports", n == "contradicts"
            return "unrelated" if sup == con else ("supports" if sup else "contradicts")
        if mode == "both" or "unrelated" not in (a, n):
            return a if a == n else "unrelated"
        return n if a == "unrelated" else a
    return answered(scored, answer)


def answered(scored: Sequence[C.Scored], answer: Callable[[C.Scored], J.Relation]) -> C.Metrics:
    """`check.metrics` of the relations `answer` gives each case (a way of deciding written in a bench script)."""
    confusion: dict[J.Relation, dict[J.Relation, int]] = {e: {p: 0 for p in J.LABELS} for e in J.LABELS}
    for s in scored:
        confusion[s.case.expected][answer(s)] += 1
    n = len(scored)
    correct = sum(confusion[e][e] for e in J.LABELS)
    wrong = sum(confusion[e][p] for e in J.LABELS for p in ("supports", "contradicts") if p != e)
    related = sum(sum(confusion[e].values()) for e in ("supports", "contradicts"))
    abstained = confusion["supports"]["unrelated"] + confusion["contradicts"]["unrelated"]
    return C.Metrics(n, correct, correct / n, wrong / n, abstained / related if related else 0.0, confusion)


def kinds(scored: Sequence[C.Scored], method: J.Method, fit: C.Fit) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = {}
    for s in scored:
        got = C.predict(s, method, fit.margin, fit.offset, fit.floor, fit.recheck)
        r = rows.setdefault(f"{s.case.kind or '-'} ({s.case.expected})", [0, 0, 0])
        r[0] += got == s.case.expected
        r[1] += got != s.case.expected and got != "unrelated"
        r[2] += s.case.expected != "unrelated" and got == "unrelated"
    return rows


def arguments(description: str | None, methods: str) -> argparse.ArgumentParser:
    """The options the judge-wave scripts share: model, score cache, ways of deciding, held-out files, --kinds."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--methods", default=methods)
    ap.add_argument("--heldout", type=Path, action="append", default=[])
    ap.add_argument("--kinds", action="store_true", help="also print right / wrong / abstained by kind")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = arguments(__doc__, "agree,negate").parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    llama = LlamaModel(resolve_model_path(None, args.model))
    model = CachedModel(llama, args.cache)
    name = llama.name.split(":")[0]
    sets = {"shipped": C.load_cases()} | {p.stem: C.load_cases(p) for p in args.heldout}
    scored: dict[str, list[C.Scored]] = {}
    cpu0 = time.process_time()
    for label, cases in sets.items():
        t0 = time.perf_counter()

        def progress(d: int, n: int, label: str = label, t0: float = t0) -> None:
            if d % 20 == 0 or d == n:
                print(f"  {name} {label}: {d}/{n}, {time.perf_counter() - t0:.0f} s wall, "
                      f"{time.process_time() - cpu0:.0f} s CPU", file=sys.stderr, flush=True)
        scored[label] = C.score_cases(model, cases, methods, progress)  # type: ignore[arg-type]
    scoring_cpu = time.process_time() - cpu0
    asked = llama.stats.calls
    cal_half = [s for s in scored["shipped"] if s.case.split == "calibration"]
    columns = {"calibration": cal_half, "report": [s for s in scored["shipped"] if s.case.split == "report"]}
    columns |= {k: v for k, v in scored.items() if k != "shipped"}
    speed = llama.stats.prompt_tokens / llama.stats.seconds if llama.stats.seconds else 0.0
    print(f"\n{name}: {asked} prompts scored by the model in this run, {scoring_cpu:.0f} CPU s "
          f"({llama.stats.prompt_tokens} prompt tokens, {speed:.1f} tokens/s)\n")
    print("| way of deciding | " + " | ".join(f"{k} ({len(v)})" for k, v in columns.items()) + " | fitted |")
    print("|---|" + "---:|" * len(columns) + "---|")
    shipped = J.shipped_calibrations().get(J.fingerprint(llama.name))
    if shipped is not None and shipped.method in methods:
        cells = [_fmt(C.metrics(v, shipped.method, shipped.margin, shipped.offset, shipped.floor)) for v in columns.values()]
        print(f"| shipped: {shipped.method} | " + " | ".join(cells)
              + f" | margin {shipped.margin}, offset {shipped.offset}, floor {shipped.floor} |")
    leans = {"negate": lean(cal_half, "negate")} if "negate" in methods else {}
    print(f"midpoint leans (calibration half): {leans}")
    by_set = {k: variants(v, methods, leans) for k, v in columns.items()}
    for vname in by_set["calibration"]:
        method, cal = by_set["calibration"][vname]
        fit = C.choose(cal, [method])
        cells = [_fmt(C.metrics(by_set[k][vname][1], method, fit.margin, fit.offset, fit.floor)) for k in columns]
        floor = f", floor {fit.floor:+.2f}" if fit.floor > J.NO_FLOOR else ""
        print(f"| {vname} | " + " | ".join(cells) + f" | margin {fit.margin:.2f}, offset {fit.offset:+.2f}{floor} |")
        if args.kinds:
            for k in columns:
                rows = kinds(by_set[k][vname][1], method, fit)
                print(f"|   {vname} by kind, {k}: " + "; ".join(f"{kind} {r[0]}/{r[1]}/{r[2]}" for kind, r in sorted(rows.items())) + " |")
    if "agree" in methods and "negate" in methods:
        fa, fn = C.choose(cal_half, ["agree"]), C.choose(cal_half, ["negate"])
        for mode in ("split", "both", "either"):
            cells = [_fmt(combined(v, fa, fn, mode)) for v in columns.values()]
            print(f"| agree with negate, {mode} | " + " | ".join(cells) + " | the two fits above |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
