"""What a smaller lexical pool or scored set would save and change at 1M lines (wave 15).

    .venv/bin/python bench/pool_cut.py [--history bench/out/lat/g1m] [--pool 600,500,400] [--scored 3000,2000,1500] [--repeat 4]

One process answers recall_latency's questions (k=10, now and as of the middle) under each value of
rank.MIN_CANDIDATES (the bm25 pool the rerank sees) and store.SCORED_ROWS (the rows bm25 scores),
the shipped values first: CPU per question (thread time, the collector steadied, the values
interleaved round by round) and how many top 10s stay the same as the shipped ones. Then, for the
shipped values, where the returned results stood in the bm25 pool and how flat the pool's scores
are: whether an exact bound on bm25 rank could leave the deep pool unread. Quality of a changed
pool is bench/variants.py's (`--only next,next+pool500`); this says only what it buys and moves.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from recall_latency import QUESTIONS, middle_date, pct  # noqa: E402

from gitmem.index import store  # noqa: E402
from gitmem.recall import rank  # noqa: E402
from gitmem.recall.search import Options, Session  # noqa: E402
from gitmem.recall.semantic import steady_collector  # noqa: E402
from gitmem.workspace import Workspace  # noqa: E402

Setting = tuple[str, int]  # ("pool" | "scored", value)


SHIPPED = (rank.MIN_CANDIDATES, store.SCORED_ROWS)  # read once, before any setting changes them


def _set(setting: Setting) -> None:
    name, value = setting
    rank.MIN_CANDIDATES, store.SCORED_ROWS = (value, SHIPPED[1]) if name == "pool" else (SHIPPED[0], value)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--history", type=Path, default=HERE / "out" / "lat" / "g1m")
    ap.add_argument("--pool", default="600,500,450,400")
    ap.add_argument("--scored", default="3000,2500,2000,1500")
    ap.add_argument("--repeat", type=int, default=4)
    args = ap.parse_args(argv)
    settings: list[Setting] = [("pool", int(v)) for v in args.pool.split(",")]
    settings += [("scored", int(v)) for v in args.scored.split(",") if int(v) != SHIPPED[1]]
    shipped: Setting = ("pool", SHIPPED[0])
    answers: dict[tuple[Setting, str | None, str], list[int | None]] = {}
    cpu: dict[Setting, list[float]] = {s: [] for s in settings}
    depth: list[int] = []
    flat: list[float] = []
    pool: list[Any] = []
    ranked = store.ranked

    def spy(*a: Any) -> Any:
        pool[:] = ranked(*a)
        return pool

    with Session(Workspace(args.history), catch_up=False) as s:
        mid = middle_date(s)
        asks = [(when, q) for when in (None, mid) for q in QUESTIONS]
        store.ranked = spy
        try:
            for setting in settings:
                _set(setting)
                for when, q in asks:
                    got = [r.id for r in s.search(q, Options(k=10, as_of=when)).results]
                    answers[setting, when, q] = got
                    if setting == shipped:
                        at = {row[0]: i for i, (row, _) in enumerate(pool)}
                        depth += [at[i] for i in got if i in at]
                        if len(pool) >= SHIPPED[0]:
                            flat.append(pool[SHIPPED[0] - 1][1] / pool[0][1])
        finally:
            store.ranked = ranked
        steady_collector()
        for _ in range(args.repeat):
            for setting in settings:
                _set(setting)
                for when, q in asks:
                    t0 = time.thread_time()
                    s.search(q, Options(k=10, as_of=when))
                    cpu[setting].append(time.thread_time() - t0)
        _set(shipped)
    base = statistics.mean(cpu[shipped])
    print("| setting | CPU mean / p50 / p95 ms | CPU mean ratio | top 10 identical | top 1 identical | top 10 overlap |")
    print("|---|---|---|---|---|---|")
    for setting in settings:
        c = cpu[setting]
        same = [answers[setting, w, q] == answers[shipped, w, q] for w, q in asks]
        first = [answers[setting, w, q][:1] == answers[shipped, w, q][:1] for w, q in asks]
        overlap = statistics.mean(len(set(answers[setting, w, q]) & set(answers[shipped, w, q]))
                                  / max(1, len(answers[shipped, w, q])) for w, q in asks)
        print(f"| {setting[0]} {setting[1]} | {1000 * statistics.mean(c):.2f} / {1000 * pct(c, 0.5):.2f} / {1000 * pct(c, 0.95):.2f}"
              f" | {statistics.mean(c) / base:.3f} | {sum(same)}/{len(asks)} | {sum(first)}/{len(asks)} | {overlap:.3f} |")
    print(f"\nshipped: bm25 pool rank of the returned results median {statistics.median(depth)},"
          f" at rank >= 200 {sum(d >= 200 for d in depth) / len(depth):.2f}, >= 400 {sum(d >= 400 for d in depth) / len(depth):.2f};"
          f" score of the 600th / the 1st: median {statistics.median(flat):.3f} (min {min(flat):.3f}, n={len(flat)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
