"""Recall latency of two checkouts side by side on one history: the ratio, not absolute times.

    .venv/bin/python bench/compare_latency_b.py --base /tmp/main-checkout --size 100k [--rounds 6]

The history is bench/recall_latency.py's (built and indexed once by this checkout). Each round
runs the base checkout's and this checkout's code in turn, each in a fresh process answering
recall_latency's questions (k=10, now and as of the middle) `--repeat` times after a warm-up, so
load on a shared machine hits both alike; p50/p95 are over every call of every round.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(code: Path, repo: Path, repeat: int, plan: str) -> None:
    sys.path.insert(0, str(code.resolve()))
    from gitmem.recall.search import Options, Session
    from gitmem.workspace import Workspace

    questions, as_of = json.loads(plan)
    times: list[float] = []
    with Session(Workspace(repo), catch_up=False) as s:
        for when in (None, as_of):
            for q in questions:
                s.search(q, Options(k=10, as_of=when))
            for _ in range(repeat):
                for q in questions:
                    t0 = time.perf_counter()
                    s.search(q, Options(k=10, as_of=when))
                    times.append((time.perf_counter() - t0) * 1000)
    print(json.dumps(times))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=Path)
    ap.add_argument("--size", default="100k")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--child", nargs=2, type=Path, metavar=("CODE", "REPO"))
    ap.add_argument("--plan", default="")
    a = ap.parse_args()
    if a.child:
        child(a.child[0], a.child[1], a.repeat, a.plan)
        return 0
    sys.path.insert(0, str(HERE))
    from recall_latency import QUESTIONS, Session, build, middle_date, pct

    ws, _ = build(a.size)
    with Session(ws, catch_up=False) as s:
        plan = json.dumps([list(QUESTIONS), middle_date(s)])
    codes = {"base": a.base, "this": HERE.parent}
    got: dict[str, list[float]] = {k: [] for k in codes}
    for _ in range(a.rounds):
        for name, code in codes.items():
            out = subprocess.run([sys.executable, __file__, "--child", str(code), str(ws.root), "--repeat",
                                  str(a.repeat), "--plan", plan], capture_output=True, text=True, check=True).stdout
            got[name] += json.loads(out)
    for name, xs in got.items():
        print(f"{name}: p50 {pct(xs, 0.5):.2f} ms  p95 {pct(xs, 0.95):.2f} ms  (n={len(xs)})")
    for p in (0.5, 0.95):
        print(f"ratio this/base at p{int(p * 100)}: {pct(got['this'], p) / pct(got['base'], p):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
