"""Dump every LoCoMo question's recall answers from one checkout's code, to diff two checkouts.

    .venv/bin/python bench/compare_recall.py --code /tmp/main-checkout --out /tmp/a.jsonl
    .venv/bin/python bench/compare_recall.py --code . --out /tmp/b.jsonl
    cmp /tmp/a.jsonl /tmp/b.jsonl
    .venv/bin/python bench/compare_recall.py --code . --history bench/out/lat/g1m --out /tmp/c.jsonl

Each LoCoMo conversation is built into a repo (bench/recall.py's builder) under --work, indexed by
the checkout's own indexer, and every question is asked with several option sets (top k, a token
budget, with history since the middle of the conversation and a kind filter). One JSON
line per (question, setting): the ordered citations, text, status and score of the results. A
refactor that changes no behaviour gives byte-identical files; --summary counts the lines that
differ between two dumps.

--history asks bench/recall_latency.py's questions instead, of a history that is already indexed
(e.g. its 1M-line one; both checkouts read the same index, which is not updated): now and as of the
middle, top k, under a token budget, with history and since the middle; with --semantic each of
those hybrid too (and top 40, and a kind filter), the real model in-process. A speed change to the
read path is checked on the size it is for.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LOCOMO = Path("/work/shared/bench/locomo/locomo10.json")


def _load(code: Path) -> tuple[Any, Any, Any, Any]:
    sys.path.insert(0, str(code))
    import gitmem
    from gitmem.index.indexer import update
    from gitmem.recall.search import Options, Session
    from gitmem.workspace import Workspace

    assert Path(gitmem.__file__).resolve().is_relative_to(code.resolve()), gitmem.__file__
    return update, Options, Session, Workspace


def _builder(code: Path) -> Any:
    # The checkout's own bench/recall.py: it imports that checkout's gitmem names.
    spec = importlib.util.spec_from_file_location("bench_recall", code / "bench" / "recall.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_recall"] = mod
    spec.loader.exec_module(mod)
    return mod


def dump(code: Path, out: Path, work: Path, limit: int) -> int:
    update, Options, Session, Workspace = _load(code)
    bench = _builder(code)
    data = json.loads(LOCOMO.read_text())
    n = 0
    with out.open("w") as f:
        for sample in data[:limit] if limit else data:
            built = bench.build_locomo(sample, work / sample["sample_id"])
            ws = Workspace(built.root)
            update(ws)
            mid = sorted(built.dates.values())[len(built.dates) // 2]
            settings = {
                "k10": {"k": 10, "as_of": built.last},
                "tok1000": {"k": 10, "budget": 1000, "as_of": built.last},
                "hist-since-mid-note": {"k": 10, "since": mid, "include_history": True, "kinds": ("note",)},
            }
            with Session(ws, catch_up=False) as s:
                for qi, qa in enumerate(sample["qa"]):
                    for name, kw in settings.items():
                        # A checkout's results are dicts or typed records (issue 11): compared as JSON.
                        res = [r.to_json() if hasattr(r, "to_json") else r
                               for r in s.search(qa["question"], Options(**kw)).results]
                        rows = [[r["source"], r["content"], r["status"], r["score"], r.get("valid_until")]
                                for r in res]
                        f.write(json.dumps({"q": f"{sample['sample_id']}/{qi}", "set": name, "r": rows}) + "\n")
                        n += 1
    return n


def dump_history(code: Path, out: Path, repo: Path, semantic: bool = False) -> int:
    _, Options, Session, Workspace = _load(code)
    sys.path.insert(0, str(HERE))
    from recall_latency import QUESTIONS, middle_date

    dense = None
    if semantic:  # the history's vectors and the real model, in-process as `gitmem mcp` has them
        from gitmem.recall import semantic as sem

        dense = sem.InProcess(sem.load_embedder())
    n = 0
    with Session(Workspace(repo), catch_up=False, dense=dense) as s, out.open("w") as f:
        mid = middle_date(s)
        settings = {
            "k10": {"k": 10},
            "k10-asof": {"k": 10, "as_of": mid},
            "tok1000": {"k": 10, "budget": 1000},
            "tok500-asof": {"k": 10, "budget": 500, "as_of": mid},
            "hist-since-mid": {"k": 10, "since": mid, "include_history": True},
        }
        if semantic:
            settings.update({f"hybrid-{name}": {**kw, "semantic": True} for name, kw in {
                **settings, "k40": {"k": 40}, "k40-asof": {"k": 40, "as_of": mid},
                "k10-note": {"k": 10, "kinds": ("note",)}}.items()})
        for q in QUESTIONS:
            for name, kw in settings.items():
                res = [r.to_json() for r in s.search(q, Options(**kw)).results]
                f.write(json.dumps({"q": q, "set": name, "r": res}) + "\n")
                n += 1
    return n


def summary(a: Path, b: Path) -> str:
    la, lb = a.read_text().splitlines(), b.read_text().splitlines()
    same = sum(x == y for x, y in zip(la, lb))
    return f"{same} / {max(len(la), len(lb))} answers identical"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--code", type=Path, help="checkout whose gitmem answers")
    p.add_argument("--out", type=Path)
    p.add_argument("--work", type=Path, default=Path("/tmp/compare_recall"))
    p.add_argument("--limit", type=int, default=0, help="conversations (0: all 10)")
    p.add_argument("--summary", nargs=2, type=Path, metavar=("A", "B"))
    p.add_argument("--history", type=Path, help="an indexed workspace: ask recall_latency's questions of it")
    p.add_argument("--semantic", action="store_true", help="with --history: hybrid settings too (the history needs vectors)")
    a = p.parse_args()
    if a.summary:
        print(summary(*a.summary))
        return 0
    if a.history:
        print(f"{dump_history(a.code, a.out, a.history, a.semantic)} answers written to {a.out}")
        return 0
    n = dump(a.code, a.out, a.work / a.code.resolve().name, a.limit)
    print(f"{n} answers written to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
