"""Where the question's time window meets recency (wave 18): which benchmark questions the rule
`rank.window_holds` can reach, and their answers with it on and off, hybrid included.

    .venv/bin/python bench/window_recency.py [--budgets 1000,2000] [--moves]

The rule acts only on a question whose words name a time window (parse/timewords.time_window,
counted from the day it is asked) and only where recency (currency.newer_first, learned.ahead)
moved a candidate: both move only statements sharing an entity (or an opinion of the same
subject), so a workspace with no row holding an entity twice cannot move. This script counts the
window questions of LoCoMo (categories 1-4, asked as of the last session) and of the LongMemEval
haystack (asked on their day), the rows with entities and opinions in their indexes, and asks the
haystack window questions whose index holds an entity on two rows with hybrid recall (vectors
filled as bench/hybrid.py does, cached under bench/out/vectors/) at each budget, the rule on and
off: evidence-turn recall and the top 3 of each. `--moves` first asks every LoCoMo and haystack
question lexically (1000 tokens) and counts those whose order recency changed at all.
"""

from __future__ import annotations

import argparse
import collections
import json
import sqlite3
import sys
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import haystack  # noqa: E402
import hybrid  # noqa: E402
import variants  # noqa: E402
from benchlib import LOCOMO, covered, patched  # noqa: E402
from gm import Asker  # noqa: E402

from gitmem.parse.timewords import time_window  # noqa: E402
from gitmem.recall import rank, semantic  # noqa: E402


def counts(db: Path) -> tuple[int, int, int, int]:
    """(rows, rows with entities, opinions, entities on two rows or more) of one index."""
    conn = sqlite3.connect(db)
    try:
        rows, ents, ops = conn.execute("select count(*), sum(coalesce(entities, '') != ''), sum(kind = 'opinion')"
                                       " from chunks").fetchone()
        seen: collections.Counter[str] = collections.Counter()
        for (e,) in conn.execute("select entities from chunks where coalesce(entities, '') != ''"):
            seen.update(e.split())
        return rows, ents or 0, ops or 0, sum(1 for v in seen.values() if v >= 2)
    finally:
        conn.close()


def moves() -> None:
    """Ask every LoCoMo (categories 1-4) and haystack question lexically at 1000 tokens and count the
    questions whose ranking newer_first or learned.ahead changed."""
    from gitmem.recall import learned, search

    seen = {"newer_first": 0, "learned.ahead": 0}
    nf, ahead = search.newer_first, learned.ahead

    def counted(name: str, fn: Any) -> Any:
        def run(ranked: list[Any], *a: Any, **k: Any) -> Any:
            out = fn(ranked, *a, **k)
            seen[name] += [id(c) for c in out] != [id(c) for c in ranked]
            return out
        return run

    search.newer_first = counted("newer_first", nf)
    learned.ahead = counted("learned.ahead", ahead)
    try:
        asked = 0
        for sample in json.loads(LOCOMO.read_text()):
            built = variants.locomo_built(sample)
            with Asker(built.root) as asker:
                for qa in sample["qa"]:
                    if qa["category"] in (1, 2, 3, 4):
                        asked += 1
                        asker.ask(qa["question"], as_of=built.last, budget=1000)
        print(f"LoCoMo: recency reordered {seen} of {asked} questions")
        seen.update({k: 0 for k in seen})
        asked = 0
        data = haystack.load()
        pool = haystack.session_pool(data)
        for q in data:
            h = haystack.build(q, pool)
            if h.answer_turns:
                asked += 1
                with Asker(h.built.root) as asker:
                    asker.ask(h.question, as_of=h.day, budget=1000)
        print(f"haystack: recency reordered {seen} of {asked} questions")
    finally:
        search.newer_first, learned.ahead = nf, ahead


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgets", default="1000,2000")
    ap.add_argument("--moves", action="store_true", help="first count the questions recency reorders at all")
    args = ap.parse_args(argv)
    if args.moves:
        moves()
    budgets = [int(b) for b in args.budgets.split(",")]
    total = windows = 0
    tally = [0, 0, 0, 0]
    for sample in json.loads(LOCOMO.read_text()):
        built = variants.locomo_built(sample)
        last = built.last[:10]
        for qa in sample["qa"]:
            if qa["category"] in (1, 2, 3, 4):
                total += 1
                windows += time_window(qa["question"], date.fromisoformat(last)) is not None
        tally = [a + b for a, b in zip(tally, counts(built.root / ".memory" / "index.sqlite"))]
    print(f"LoCoMo: {windows} of {total} questions name a time window; indexes: {tally[0]} rows, {tally[1]} with"
          f" entities, {tally[2]} opinions, {tally[3]} entities on two rows or more")
    data = haystack.load()
    pool = haystack.session_pool(data)
    reach = []
    total = windows = 0
    for q in data:
        h = haystack.build(q, pool)
        if not h.answer_turns:
            continue
        total += 1
        if time_window(h.question, date.fromisoformat(h.day[:10])) is None:
            continue
        windows += 1
        if counts(h.built.root / ".memory" / "index.sqlite")[3]:
            reach.append(h)
    print(f"haystack: {windows} of {total} questions name a time window; {len(reach)} of them in an index"
          " with an entity on two rows or more (the only ones recency can move)")
    emb = hybrid.CachedEmbedder(writer=True)
    dense = semantic.InProcess(emb)
    for h in reach:
        hybrid.fill(h.built.root, emb)
        where = [h.built.lines[t] for t in h.answer_turns]
        for mode in (False, True):
            kept = {"rank.WINDOW_HOLDS": mode}
            for sem in (False, True):
                with patched({"rank": rank}, kept), Asker(h.built.root, dense=dense) as asker:
                    for b in budgets:
                        res = asker.ask(h.question, as_of=h.day, budget=b, semantic=sem)
                        got = sum(covered(res, w) for w in where) / len(where)
                        top = " | ".join(str(getattr(r, "content", r))[:50] for r in res[:3])
                        print(f"{h.qid} {h.qtype} {'hybrid' if sem else 'lexical'} hold={'on' if mode else 'off'}"
                              f" @{b}: {got:.2f}  {h.question!r}  top: {top}")
    emb.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
