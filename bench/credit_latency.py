"""What wave 7's hybrid stages (or wave 8's asker look-up, or wave 9's meaning in currency) cost per
question, side by side with them off, in one process.

    .venv/bin/python bench/credit_latency.py [--repeat 5] [--stage w7|asker|meaning] [--size 100k|1m] [--no-fill]

On bench/recall_latency.py's 100k-line history with random vectors (bench/hybrid_latency.py fills
them): one Session, the 15 latency questions, hybrid recall (in-process model, as `gitmem mcp`)
with k=10 and with a 1000-token budget, now and as of the middle, alternating "off" (the fusion as
wave 6 shipped it: no speaker look-up, no neutralised question, no credits) and "on" per question.
CPU time of the process (all threads), p50 / p95, and the ratio on / off.

`--stage asker`: "off" is wave 7 as shipped, "on" adds wave 8's first-person asker look-up
(semantic.ASKER: one FTS5 initial-token query for a question in the first person). `--stage
meaning`: "off" is wave 8 as shipped (meaning.MEANING_SLOT off), "on" adds wave 9's pair test in
currency (recall/meaning.py: the head's stored vectors read when a pair reaches it); with `--truth
SET` it runs on that current-truth set's workspace instead (real vectors: built and embedded by
`bench/current_truth.py --semantic`), each question as of its own date. `--no-fill`
leaves a history without vectors as it is (filling 1M random vectors takes long): the dense side
then finds nothing and the ratio is over a cheaper question, so it overstates the stage's share.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from hybrid_latency import fill_random  # noqa: E402
from recall_latency import QUESTIONS, build, middle_date, pct  # noqa: E402

from gitmem.recall import meaning, semantic  # noqa: E402
from gitmem.recall.search import Options, Session  # noqa: E402

OFF = {"SPEAKER_CREDIT": 0.0, "ANCHOR_CREDIT": 0.0, "NEUTRAL_SPEAKERS": False, "ASKER": None}
ASKER_OFF = {"ASKER": None}
MEANING_OFF = {"MEANING_SLOT": False}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--stage", choices=("w7", "asker", "meaning"), default="w7")
    ap.add_argument("--size", choices=("100k", "1m"), default="100k")
    ap.add_argument("--no-fill", action="store_true")
    ap.add_argument("--truth", help="a current-truth set's workspace and questions (e.g. heldout5), not the history")
    args = ap.parse_args(argv)
    if args.truth:
        import current_truth

        from gitmem.workspace import Workspace

        ws = Workspace(current_truth.OUT / ("current-truth" if args.truth == "tune" else f"current-truth-{args.truth}"))
        asked = [(q.q, q.as_of) for s in current_truth.load(current_truth.HALVES[args.truth]) for q in s.questions]
    else:
        ws, _ = build(args.size)
        if not args.no_fill:
            fill_random(ws)  # a no-op when the vectors are there
    off = {"w7": OFF, "asker": ASKER_OFF, "meaning": MEANING_OFF}[args.stage]
    module = meaning if args.stage == "meaning" else semantic  # where the stage's switches live
    on = {k: getattr(module, k) for k in off}
    emb = semantic.load_embedder()
    times: dict[str, list[float]] = {}
    with Session(ws, dense=semantic.InProcess(emb)) as s:
        speakers = s._speakers
        if not args.truth:
            mid = middle_date(s)
            asked = [(q, when) for when in (None, mid) for q in QUESTIONS]
        for group in sorted({when is None for _, when in asked}, reverse=True):  # "now" first, then as-of
            these = [(q, when) for q, when in asked if (when is None) == group]
            for q, when in these:  # warm-up (the first search loads the vectors)
                s.search(q, Options(k=10, as_of=when, semantic=True))
            for _ in range(args.repeat):
                for q, when in these:
                    for budget in (0, 1000):
                        for mode in ("off", "on"):
                            for k, v in (off if mode == "off" else on).items():
                                setattr(module, k, v)
                            if args.stage == "w7":
                                s._speakers = (lambda text, bound: frozenset()) if mode == "off" else speakers  # type: ignore[method-assign]
                            c0 = time.process_time()
                            s.search(q, Options(k=10, budget=budget, as_of=when, semantic=True))
                            key = f"{mode} {'k=10' if not budget else 'budget 1000'} {'now' if when is None else 'as-of'}"
                            times.setdefault(key, []).append((time.process_time() - c0) * 1000)
    for k, v in on.items():
        setattr(module, k, v)
    print("| case | off p50 / p95 (ms CPU) | on p50 / p95 (ms CPU) | on / off (p50, p95) |")
    print("|---|---|---|---|")
    for case in ("k=10 now", "k=10 as-of", "budget 1000 now", "budget 1000 as-of"):
        if f"off {case}" not in times:
            continue  # a current-truth set asks every question as of a date
        a, b = times[f"off {case}"], times[f"on {case}"]
        print(f"| {case} | {statistics.median(a):.1f} / {pct(a, 95):.1f} | {statistics.median(b):.1f} / {pct(b, 95):.1f} |"
              f" {statistics.median(b) / statistics.median(a):.2f}x, {pct(b, 95) / pct(a, 95):.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
