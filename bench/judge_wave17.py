"""Wave 17 of the reflection judge: rules first, the model second (issue 15, "deterministic first").

From the score cache only (no model is run; `bench/judge_wave15.py --score` filled it), on every
labelled set (the shipped calibration and report halves, bench/judge_heldout2..14.jsonl), accuracy /
wrong direction / abstain of:

- the rules alone (`judge.ruled`, no model: what SmolLM2, which never decides, gets with them);
- SmolLM2 (the default) as shipped: it never decides;
- the 1.5B (Qwen2.5-Coder-1.5B Q4_K_M, bench only) as shipped: the gate, then `agree` with the
  shipped margin (slack 0.10, no runtime recorded here);
- the 1.5B with the rules first: a gate-passing pair the rules decide takes their verdict, every
  other pair the shipped margin's;
- the plain baseline (no gate, best label, no margin) where its scores are cached;

and, per rule, its verdicts right / wrong on each set, with every wrong one listed.

    nice -n 19 .venv/bin/python bench/judge_wave17.py --cache C [--wrong heldout12] [--blind FILE]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel
from gitmem.reflect.prompts import Relation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_wave8 import _fmt  # noqa: E402  (bench scripts import each other by path)
from judge_wave13 import NAME, _CacheOnly, load_sets  # noqa: E402
from judge_wave15 import HELDOUT, OldScheme, baseline  # noqa: E402

SMOL = "SmolLM2-135M-Instruct.Q4_1.gguf:98362432:747cb1f01955"


def rule_name(r: J.Ruled) -> str:
    return r.rule.split(" (")[0].removeprefix("rule: ")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--wrong", action="append", default=[], metavar="SET", help="list the 1.5B's wrong-direction answers on SET")
    ap.add_argument("--blind", type=Path, action="append", default=[], metavar="FILE",
                    help="one more labelled set (its `agree` scores in the cache: bench/reflect_judge.py with the 1.5B asks them)")
    args = ap.parse_args(argv)
    cases = load_sets(HELDOUT)
    cases.update({p.stem.replace("judge_", ""): C.load_cases(p) for p in args.blind})
    new = CachedModel(_CacheOnly(NAME), args.cache)  # type: ignore[arg-type]
    sets = {k: C.score_cases(new, v, ["agree"], second=False) for k, v in cases.items()}
    shipped = J.on_runtime(J.shipped_calibrations()[J.fingerprint(NAME)], "this host")
    smol = J.shipped_calibrations()[J.fingerprint(SMOL)]
    assert smol.never_decides
    ruled = {k: [None if s.gated else J.ruled(s.case.fact, s.case.opinion) for s in ss] for k, ss in sets.items()}

    def margin(s: C.Scored) -> Relation:
        return C.predict(s, "agree", shipped.margin, shipped.offset, shipped.floor, slack=shipped.slack)

    def rules_then(k: str, model: Callable[[C.Scored], Relation]) -> list[Relation]:
        return C.rules_first(sets[k], [model(s) for s in sets[k]])

    names = list(sets)
    print("| judge | " + " | ".join(f"{k} ({len(sets[k])})" for k in names) + " |")
    print("|---|" + "---:|" * len(names))

    def row(title: str, answers: Callable[[str], list[Relation]]) -> None:
        print(f"| {title} | " + " | ".join(_fmt(C.tally(sets[k], answers(k))) for k in names) + " |")

    row("SmolLM2 (default), shipped: never decides", lambda k: ["unrelated"] * len(sets[k]))
    row("**rules alone** (SmolLM2 with the rules first)", lambda k: rules_then(k, lambda s: "unrelated"))
    row(f"1.5B, shipped margin (agree, slack {shipped.slack:.2f})", lambda k: [margin(s) for s in sets[k]])
    row("**1.5B, rules first, then the shipped margin**", lambda k: rules_then(k, margin))

    def base(k: str) -> str:
        b = baseline(new, cases[k]) or baseline(OldScheme(_CacheOnly(NAME), args.cache), cases[k])  # type: ignore[arg-type]
        return "not scored" if b is None else _fmt(b)
    print("| baseline (1.5B): no gate, best label, no margin | " + " | ".join(base(k) for k in names) + " |")

    # Per rule: right / wrong verdicts, and what the shipped margin answered on the same pairs.
    print("\n| rule | " + " | ".join(names) + " | all |")
    print("|---|" + "---:|" * (len(names) + 1))
    kinds = ["ends what the opinion likes", "switches to what the opinion likes less", "restates the opinion"]  # `judge.ruled`'s readings
    wrong_lines = []
    for kind in kinds:
        cells, tot = [], [0, 0, 0]
        for k in names:
            right = wrong = gain = 0
            for s, r in zip(sets[k], ruled[k]):
                if r is None or rule_name(r) != kind:
                    continue
                ok = r.relation == s.case.expected
                right += ok
                wrong += not ok
                gain += ok - (margin(s) == s.case.expected)
                if not ok:
                    wrong_lines.append(f"- {k}: expected {s.case.expected}, ruled {r.relation} ({r.rule}): "
                                       f"{s.case.fact} / {s.case.opinion}")
            cells.append(f"{right} / {wrong} ({gain:+d})")
            tot = [tot[0] + right, tot[1] + wrong, tot[2] + gain]
        print(f"| {kind}: right / wrong (vs the 1.5B's margin) | " + " | ".join(cells) + f" | {tot[0]} / {tot[1]} ({tot[2]:+d}) |")
    print("\nwrong rule verdicts:" + ("".join("\n" + w for w in wrong_lines) if wrong_lines else " none"))
    for k in args.wrong:
        print(f"\nthe 1.5B's wrong directions on {k} (shipped margin): expected / answered / kind / asked about / scores / fact / opinion")
        for s in sets[k]:
            a = margin(s)
            if a != s.case.expected and a != "unrelated":
                sc = s.scores["agree"]
                print(f"- {s.case.expected} / {a} / {s.case.kind} / {'affirmative form' if sc.flipped else 'as written'} / "
                      f"contrast {J.contrast(sc):+.2f}, yes-lean {J.yes_lean(sc):+.2f} / {s.case.fact} / {s.case.opinion}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
