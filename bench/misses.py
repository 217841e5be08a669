"""Where the LoCoMo misses are: every evidence turn of the tune half that today's ranking leaves
out of a budget, with its rank in the full ranking and the question words it shares.

    .venv/bin/python bench/misses.py [--half tune] [--budget 1000] [--out bench/out/misses-tune.tsv]

Tune half only by default (conversations 0-4): what a ranking change is designed on; the
validation half is never looked at this way. Prints a summary (rank buckets, share of missed
turns that hold no question word) and writes one row per missed turn: category, rank (or
"none": not a candidate), shared stems, question, evidence text.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import recall  # noqa: E402
from benchlib import LOCOMO, OUT, covered, question_stems, rank_of  # noqa: E402
from gm import Asker  # noqa: E402
from variants import locomo_built  # noqa: E402


def shared(stems: list[str], text: str) -> list[str]:
    low = text.lower()
    return [s for s in stems if s in low]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--half", choices=("tune", "validate"), default="tune")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    data = json.loads(LOCOMO.read_text())
    convs = range(0, 5) if args.half == "tune" else range(5, 10)
    rows: list[tuple[int, str, str, str, str]] = []
    buckets: Counter[str] = Counter()
    n_ev = 0
    for ci in convs:
        built = locomo_built(data[ci])
        with Asker(built.root) as asker:
            for qa in data[ci]["qa"]:
                if qa["category"] not in (1, 2, 3, 4):
                    continue
                ids = recall.evidence_ids(qa.get("evidence", []), built.lines)
                if not ids:
                    continue
                res = asker.ask(qa["question"], as_of=built.last, budget=args.budget)
                full = asker.ask(qa["question"], as_of=built.last, k=600)
                stems = question_stems(qa["question"])
                for tid in ids:
                    n_ev += 1
                    where = built.lines[tid]
                    if covered(res, where):
                        continue
                    r = rank_of(full, where)
                    common = shared(stems, built.texts[tid])
                    bucket = ("none" if r is None else "<20" if r < 20 else "20-40" if r < 40 else
                              "40-100" if r < 100 else ">=100")
                    buckets[bucket] += 1
                    buckets["no shared word"] += not common
                    rows.append((qa["category"], "none" if r is None else str(r), ",".join(common),
                                 qa["question"], built.texts[tid]))
    missed = len(rows)
    print(f"{args.half} half, {args.budget} tokens: {missed} of {n_ev} evidence turns missed")
    for key in ("<20", "20-40", "40-100", ">=100", "none", "no shared word"):
        print(f"  {key}: {buckets[key]} ({buckets[key] / max(missed, 1):.0%})")
    out = args.out or OUT / f"misses-{args.half}-{args.budget}.tsv"
    out.write_text("".join("\t".join(map(str, r)) + "\n" for r in rows))
    print(f"rows: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
