"""Wave 9 of the reflection judge: the polarity step (`judge.affirmative`) on and off, every way of
deciding, every labelled set, in one run.

An opinion written as an aversion or a negation ("Dislikes flying", "Can't stand loud restaurants",
"Does not want X") is asked about in its affirmative form ("Likes flying") and the verdict is turned
(`check.score_cases(..., polarity=True)`). For each model, every case of every set goes through the relevance gate and
the pairs it lets through are scored with each of `--methods`, once without the step (main's judge)
and once with it, through the score cache (a re-run asks the model only for prompts it has not
answered: with the step, only the pairs whose opinion has an affirmative form are new). Each way of
deciding is fitted on the **calibration half of the shipped cases only** (`check.choose`, as
`gitmem model check` fits it) and measured, unchanged, on the shipped report half and on each
`--heldout` file; main's shipped calibration (`data/calibration.json` before this wave, given by
`--main-fit METHOD,MARGIN,OFFSET,FLOOR`) is measured in the same run.

    .venv/bin/python bench/judge_wave9.py --model M --cache bench/out/judge-cache.sqlite --methods labels,contrast,yesno,agree \\
        --heldout bench/judge_heldout2.jsonl --heldout bench/judge_heldout3.jsonl --heldout bench/judge_heldout4.jsonl [--kinds]

Prints Markdown tables: accuracy / wrong direction (count) / abstain per set.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.model import CachedModel, LlamaModel, resolve_model_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_wave8 import _fmt, arguments, kinds  # noqa: E402  (bench scripts import each other by path)


def score_all(model: J.Scorer, sets: dict[str, list[C.Case]], methods: Sequence[J.Method],
              step: bool) -> dict[str, list[C.Scored]]:
    """Every set scored with the polarity step on or off; columns: calibration, report, then each held-out file."""
    scored = {k: C.score_cases(model, v, methods, polarity=step) for k, v in sets.items()}
    shipped = scored.pop("shipped")
    return {"calibration": [s for s in shipped if s.case.split == "calibration"],
            "report": [s for s in shipped if s.case.split == "report"], **scored}


def main(argv: list[str] | None = None) -> int:
    ap = arguments(__doc__, "labels,contrast,yesno,agree")
    ap.add_argument("--main-fit", default="", help="main's stored judge: METHOD,MARGIN,OFFSET,FLOOR")
    args = ap.parse_args(argv)
    methods: list[J.Method] = [m for m in args.methods.split(",") if m]  # type: ignore[misc]
    llama = LlamaModel(resolve_model_path(None, args.model))
    model = CachedModel(llama, args.cache)
    name = llama.name.split(":")[0]
    sets = {"shipped": C.load_cases()} | {p.stem: C.load_cases(p) for p in args.heldout}
    cpu0 = time.process_time()
    runs = {step: score_all(model, sets, methods, step) for step in (False, True)}
    speed = llama.stats.prompt_tokens / llama.stats.seconds if llama.stats.seconds else 0.0
    print(f"\n{name}: {llama.stats.calls} prompts scored by the model in this run, {time.process_time() - cpu0:.0f} CPU s "
          f"({llama.stats.prompt_tokens} prompt tokens, {speed:.1f} tokens/s)\n")
    columns = list(runs[False])
    flipped = {k: sum(1 for s in v if not s.gated and any(p.flipped for p in s.scores.values())) for k, v in runs[True].items()}
    print("pairs asked about the affirmative form: " + ", ".join(f"{k} {n}" for k, n in flipped.items()) + "\n")
    print("| polarity step | way of deciding | " + " | ".join(f"{k} ({len(v)})" for k, v in runs[False].items()) + " | fitted |")
    print("|---|---|" + "---:|" * len(columns) + "---|")
    if args.main_fit:
        m, margin, offset, floor = args.main_fit.split(",")
        cells = [_fmt(C.metrics(runs[False][k], m, float(margin), float(offset), float(floor))) for k in columns]  # type: ignore[arg-type]
        print(f"| no | main's stored {m} | " + " | ".join(cells) + f" | margin {margin}, offset {offset}, floor {floor} |")
    for step, scored in runs.items():
        for method in [*methods, "chosen"]:
            fit = C.choose(scored["calibration"], methods if method == "chosen" else [method])
            cells = [_fmt(C.metrics(scored[k], fit.method, fit.margin, fit.offset, fit.floor)) for k in columns]
            floor = f", floor {fit.floor:+.2f}" if fit.floor > J.NO_FLOOR else ""
            label = f"chosen among all: {fit.method}" if method == "chosen" else method
            print(f"| {'yes' if step else 'no'} | {label} | " + " | ".join(cells)
                  + f" | margin {fit.margin:.2f}, offset {fit.offset:+.2f}{floor} |")
            if args.kinds and method == "chosen":
                for k in columns:
                    rows = kinds(scored[k], fit.method, fit)
                    print(f"|   | by kind, {k} | " + "; ".join(f"{kind} {r[0]}/{r[1]}/{r[2]}" for kind, r in sorted(rows.items())) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
