"""Variants of the reflection judge, decided from cached scores only (no model call).

For one model, every way of deciding in `--methods` is fitted on the calibration half of the
shipped labelled cases (`gitmem/reflect/data/judge_cases.jsonl`) exactly as `gitmem model check`
fits it, then measured on the report half and on each `--heldout` file, twice: with the relevance
gate's thing-subject rule (`judge.SPECIFIC_GATE`, wave 7) and without it (main before wave 7), in
the same run. Also one variant that was tried and dropped: `contrast` with a floor on the model's
own "unrelated" score (log P(unrelated) - the best of the other two must stay below it).

The scores come from the score cache that `bench/reflect_judge.py --cache` fills (the questions are
the same): a pair not in it is an error that says so; score it first with

    .venv/bin/python bench/reflect_judge.py --model M --methods labels,contrast,yesno --cache bench/out/judge-cache.sqlite

Usage (prints a Markdown table; accuracy / wrong direction (count) / abstain on each set):

    .venv/bin/python bench/judge_variants.py --model ../models-cache/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \\
        --cache bench/out/judge-cache.sqlite --heldout bench/judge_heldout2.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, model_identity, resolve_model_path


class NotCached(Exception):
    pass


class CacheOnly:
    """A model that only answers from the score cache (wrapped by CachedModel): a miss is an error."""

    def __init__(self, name: str) -> None:
        self.name = name

    def score(self, system: str, user: str, continuations: Sequence[str]) -> list[float]:
        raise NotCached(user.splitlines()[1] if "\n" in user else user)


def _fmt(m: C.Metrics) -> str:
    wrong = round(m.wrong_direction * m.cases)
    return f"{m.accuracy:.0%} / {m.wrong_direction:.1%} ({wrong}) / {m.abstain:.0%}"


def _with_unrelated_floor(scored: list[C.Scored]) -> list[C.Scored]:
    """The dropped variant, through `likely`'s machinery: its `bears` is minus the model's own
    "unrelated" lead (log P(unrelated) - max of the other two), its direction the contrast."""
    out = []
    for s in scored:
        if s.gated:
            out.append(s)
            continue
        sc = s.scores["labels"]
        assert sc.labels is not None
        lead = sc.labels[2] - max(sc.labels[0], sc.labels[1])
        out.append(C.Scored(s.case, False, {"likely": J.PairScores(labels=sc.labels, bears=-lead, likely=J.contrast(sc))}))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="the GGUF file whose cached scores are read")
    ap.add_argument("--cache", type=Path, required=True, help="the score cache of bench/reflect_judge.py")
    ap.add_argument("--heldout", type=Path, action="append", default=[], help="another labelled file (repeatable)")
    ap.add_argument("--methods", default="labels,contrast,yesno,agree")
    ap.add_argument("--kinds", action="store_true", help="also print right / wrong / abstained by kind")
    args = ap.parse_args(argv)
    methods: list[J.Method] = [m for m in J.METHODS if m in args.methods.split(",")]
    model = CachedModel(CacheOnly(model_identity(resolve_model_path(None, args.model))), args.cache)  # type: ignore[arg-type]
    sets = [("calibration", [c for c in C.load_cases() if c.split == "calibration"]),
            ("report", [c for c in C.load_cases() if c.split == "report"])]
    sets += [(p.name, C.load_cases(p)) for p in args.heldout]
    print(f"model {Path(args.model).name}; accuracy / wrong direction (count) / abstain, each fitted on the calibration half\n")
    print("| thing-subject rule | way of deciding | " + " | ".join(n for n, _ in sets) + " | fitted |")
    print("|---|---|" + "---:|" * len(sets) + "---|")
    try:
        for rule in (False, True):
            J.SPECIFIC_GATE = rule
            scored = {n: C.score_cases(model, cases, methods) for n, cases in sets}
            cal = scored["calibration"]
            fits = [(f"{m} (own fit)", C.choose(cal, [m])) for m in methods]
            if "agree" in methods and len(methods) > 1:
                fits.append(("chosen among all", C.choose(cal, methods)))
            for label, fit in fits:
                cells = [_fmt(C.metrics(s, fit.method, fit.margin, fit.offset, fit.floor)) for s in scored.values()]
                print(f"| {'yes' if rule else 'no'} | {label} | " + " | ".join(cells) + f" | {fit.method}, margin {fit.margin:.2f}"
                      + J.describe_rule(fit.method, fit.offset, fit.floor) + " |")
            if "contrast" in methods:
                floored = {n: _with_unrelated_floor(s) for n, s in scored.items()}
                fit = C.choose(floored["calibration"], ["likely"])
                cells = [_fmt(C.metrics(s, "likely", fit.margin, fit.offset, fit.floor)) for s in floored.values()]
                print(f"| {'yes' if rule else 'no'} | contrast + floor on its own 'unrelated' score | " + " | ".join(cells)
                      + f" | margin {fit.margin:.2f}, offset {fit.offset:+.2f}, floor {fit.floor:+.2f} |")
            gated = [f"{n} {sum(s.gated for s in ss if s.case.expected != 'unrelated')} of "
                     f"{sum(s.case.expected != 'unrelated' for s in ss)} related" for n, ss in scored.items()]
            print(f"| {'yes' if rule else 'no'} | (gate: related pairs dropped) | " + " | ".join(gated) + " | |")
            if args.kinds:
                for m in methods:
                    fit = C.choose(cal, [m])
                    for n, ss in scored.items():
                        k: Counter[tuple[str, str]] = Counter()
                        for s in ss:
                            got = C.predict(s, m, fit.margin, fit.offset, fit.floor)
                            k[(s.case.kind, "right" if got == s.case.expected else "wrong" if got != "unrelated" else "abstained")] += 1
                        print(f"  kinds rule={rule} {m} {n}: " + ", ".join(f"{a} {b} {v}" for (a, b), v in sorted(k.items())),
                              file=sys.stderr)
    except NotCached as e:
        print(f"error: a pair is not in the score cache ({e}); score it first with bench/reflect_judge.py --cache",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
