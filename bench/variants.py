"""Ranking variants side by side: LoCoMo halves and the LongMemEval haystack halves, one run.

    .venv/bin/python bench/variants.py [--limit N] [--only NAME,...] [--locomo-2000] [--write]

Each variant is a set of overrides of the ranking constants (gitmem/recall/rank.py and
gitmem/recall/result.py), applied in-process around the same questions on the same indexes, with
the plain FTS5 floor computed once in the same run. Reported: LoCoMo categories 1-4 at 1000 and
2000 tokens per half (tune = conversations 0-4, validate = 5-9), the haystack at 1000 and 2000
tokens per half (tune / report) and per question type on both halves at 2000 tokens. A change is
kept only if it beats the baseline on both LoCoMo halves and the haystack at 1000 and 2000 tokens
(issue 16's rule); bench/RESULTS.md lists every variant, kept or dropped.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import haystack  # noqa: E402
import recall  # noqa: E402
from benchlib import LOCOMO, OUT, Floor, Tally, cached_log_repo, covered, fmt, half, patched, publish  # noqa: E402
from gm import Asker, index  # noqa: E402

from gitmem.parse import timewords  # noqa: E402
from gitmem.recall import currency, rank, result  # noqa: E402

BUDGETS = (1000, 2000)
LOCOMO_BUDGETS: tuple[int, ...] = (1000,)  # issue 16's LoCoMo target is at 1000 tokens (2000: --locomo-2000)

# name -> {module.CONSTANT: value}; "today" is the shipped ranking before this work.
# The ranking before issue 16's changes: every new factor off. Variants below are relative to it
# (each names all the factors it turns on), so they mean the same whatever the shipped defaults are.
TODAY = {"result.SNIPPET_CHARS": 0, "rank.NEIGHBOUR_COST_POWER": 0.0, "rank.FILE_DECAY": 1.0,
         "rank.TIME_BOOST": 1.0, "rank.SPEAKER_BOOST": 1.0, "rank.PRF_WEIGHT": 0.0, "rank.WINDOW_HOLDS": False,
         "timewords.MORE_FORMS": False, "currency.WINDOW_KEEPS": False}
VARIANTS: dict[str, dict[str, Any]] = {
    "today": {},
    "snippet300": {"result.SNIPPET_CHARS": 300},
    "snippet500": {"result.SNIPPET_CHARS": 500},
    "ncost1": {"rank.NEIGHBOUR_COST_POWER": 1.0},
    "ncost2": {"rank.NEIGHBOUR_COST_POWER": 2.0},
    "decay0.7": {"rank.FILE_DECAY": 0.7},
    "decay0.85": {"rank.FILE_DECAY": 0.85},
    "time1.5": {"rank.TIME_BOOST": 1.5},
    "time2": {"rank.TIME_BOOST": 2.0},
    "speaker1.3": {"rank.SPEAKER_BOOST": 1.3},
    "snippet200": {"result.SNIPPET_CHARS": 200},
    "snip300+ncost1": {"result.SNIPPET_CHARS": 300, "rank.NEIGHBOUR_COST_POWER": 1.0},
    "snip300+decay0.85": {"result.SNIPPET_CHARS": 300, "rank.FILE_DECAY": 0.85},
    "snip300+ncost2": {"result.SNIPPET_CHARS": 300, "rank.NEIGHBOUR_COST_POWER": 2.0},
    "snip200+ncost1": {"result.SNIPPET_CHARS": 200, "rank.NEIGHBOUR_COST_POWER": 1.0},
    "snip300+ncost1+time1.5": {"result.SNIPPET_CHARS": 300, "rank.NEIGHBOUR_COST_POWER": 1.0, "rank.TIME_BOOST": 1.5},
}
# The ranking main shipped after the first round of issue 16 (= snip300+ncost1+time1.5): the
# baseline of the second round, whose variants are "main+<change>".
MAIN = VARIANTS["snip300+ncost1+time1.5"]
VARIANTS |= {
    "main": MAIN,
    "main+snip200": MAIN | {"result.SNIPPET_CHARS": 200},
    "main+speaker1.3": MAIN | {"rank.SPEAKER_BOOST": 1.3},
    "main+snip200+speaker1.3": MAIN | {"result.SNIPPET_CHARS": 200, "rank.SPEAKER_BOOST": 1.3},
}
VARIANTS |= {f"main+prf{w}": MAIN | {"rank.PRF_WEIGHT": w} for w in (0.1, 0.25, 0.5)}
VARIANTS |= {f"main+prf{w}x{d}": MAIN | {"rank.PRF_WEIGHT": w, "rank.PRF_DOCS": d} for w in (0.25,) for d in (5, 20)}
NEXT = MAIN | {"result.SNIPPET_CHARS": 200, "rank.SPEAKER_BOOST": 1.3}  # = main+snip200+speaker1.3
VARIANTS |= {
    "next": NEXT,
    "next+speaker1.6": NEXT | {"rank.SPEAKER_BOOST": 1.6},
    "next+prf0.25": NEXT | {"rank.PRF_WEIGHT": 0.25},
    "next+prf0.5": NEXT | {"rank.PRF_WEIGHT": 0.5},
}
# Smaller bm25 pools (rank.MIN_CANDIDATES, 600) for a cheaper 1M-line question (wave 15): each loses on LoCoMo.
VARIANTS |= {f"next+pool{n}": NEXT | {"rank.MIN_CANDIDATES": n} for n in (500, 450, 400)}
# Wave 18: recency (newer_first, the learned pair model) keeps to each side of the question's time window.
VARIANTS["next+hold"] = NEXT | {"rank.WINDOW_HOLDS": True}
# Wave 19: seasons, holidays and year-less dates read as windows; a past window keeps what held then.
VARIANTS["next+hold+forms"] = VARIANTS["next+hold"] | {"timewords.MORE_FORMS": True}
VARIANTS["next+hold+keeps"] = VARIANTS["next+hold"] | {"currency.WINDOW_KEEPS": True}
VARIANTS["next+hold+forms+keeps"] = VARIANTS["next+hold"] | {"timewords.MORE_FORMS": True, "currency.WINDOW_KEEPS": True}
BASELINE = "main"  # always run: the variants are judged against it


# (set, budget, question) -> variant -> that question's evidence recall: the questions the variants
# answer differently are listed by name after the tables.
PER_QUESTION: dict[tuple[str, int, str], dict[str, float]] = {}


def applied(overrides: dict[str, Any]) -> contextlib.AbstractContextManager[None]:
    return patched({"rank": rank, "result": result, "timewords": timewords, "currency": currency}, TODAY | overrides)


def locomo_built(sample: dict[str, Any]) -> Any:
    """recall.build_locomo, reusing the repo when its sessions are unchanged."""
    sessions = recall.locomo_sessions(sample)
    key = hashlib.sha1(json.dumps([(w.isoformat(), h, t) for w, h, t in sessions]).encode()).hexdigest()
    built = cached_log_repo(OUT / "locomo-cached" / sample["sample_id"], sessions, key)
    index(built.root)
    return built


def run_locomo(names: list[str], t: Tally) -> None:
    data = json.loads(LOCOMO.read_text())
    for ci, sample in enumerate(data):
        part = "tune" if ci < 5 else "validate"
        built = locomo_built(sample)
        floor = Floor(built)
        qs = []
        for qa in sample["qa"]:
            ids = recall.evidence_ids(qa.get("evidence", []), built.lines)
            if ids and qa["category"] in (1, 2, 3, 4):
                qs.append((qa["question"], [built.lines[x] for x in ids], qa["category"]))
        for b in LOCOMO_BUDGETS:
            for question, where, cat in qs:
                res = floor.ask(question, budget=b)
                t.add(f"floor locomo {b}", [part, (part, cat)], sum(covered(res, w) for w in where) / len(where))
        floor.close()
        with Asker(built.root) as asker:
            for name in names:
                with applied(VARIANTS[name]):
                    for b in LOCOMO_BUDGETS:
                        for question, where, cat in qs:
                            res = asker.ask(question, as_of=built.last, budget=b)
                            got = sum(covered(res, w) for w in where) / len(where)
                            t.add(f"{name} locomo {b}", [part, (part, cat)], got)
                            PER_QUESTION.setdefault((f"locomo {part} c{cat}", b, f"{sample['sample_id']}: {question}"), {})[name] = got


def run_haystack(names: list[str], t: Tally, limit: int) -> None:
    data = haystack.load()
    pool = haystack.session_pool(data)
    for q in data[:limit]:
        h = haystack.build(q, pool)
        if not h.answer_turns:
            continue
        groups = [(half(h.qid), "all"), ("all", h.qtype), (half(h.qid), h.qtype), ("all", "all")]
        where = [h.built.lines[tid] for tid in h.answer_turns]
        floor = Floor(h.built, h.visible)
        for b in BUDGETS:
            res = floor.ask(h.question, budget=b)
            t.add(f"floor hay {b}", groups, sum(covered(res, w) for w in where) / len(where))
        floor.close()
        with Asker(h.built.root) as asker:
            for name in names:
                with applied(VARIANTS[name]):
                    for b in BUDGETS:
                        res = asker.ask(h.question, as_of=h.day, budget=b)
                        got = sum(covered(res, w) for w in where) / len(where)
                        t.add(f"{name} hay {b}", groups, got)
                        PER_QUESTION.setdefault((f"hay {half(h.qid)} {h.qtype}", b, f"{h.qid} ({h.day}): {h.question}"), {})[name] = got


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=500, help="first N haystack questions")
    ap.add_argument("--only", default="", help="comma-separated variant names (default all)")
    ap.add_argument("--skip-locomo", action="store_true")
    ap.add_argument("--skip-haystack", action="store_true")
    ap.add_argument("--locomo-2000", action="store_true", help="LoCoMo at 2000 tokens too")
    ap.add_argument("--locomo-budgets", default="", help="LoCoMo budgets, comma-separated (e.g. 500,1000,2000)")
    ap.add_argument("--baseline", default=BASELINE, help="the variant always run (default %(default)s)")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    global LOCOMO_BUDGETS
    if args.locomo_2000:
        LOCOMO_BUDGETS = BUDGETS
    if args.locomo_budgets:
        LOCOMO_BUDGETS = tuple(int(b) for b in args.locomo_budgets.split(","))
    names = [n for n in (args.only.split(",") if args.only else VARIANTS) if n]
    if args.baseline not in names:
        names.insert(0, args.baseline)
    t = Tally()
    t0 = time.perf_counter()
    if not args.skip_locomo:
        run_locomo(names, t)
    if not args.skip_haystack:
        run_haystack(names, t, args.limit)
    (OUT / "variants-tally.json").write_text(json.dumps({f"{k[0]}|{k[1]}": v for k, v in t.sums.items()} | {
        f"n|{k[0]}|{k[1]}": v for k, v in t.counts.items()}, default=str))
    lbs = sorted(set(LOCOMO_BUDGETS) | set(BUDGETS))
    cols = [f"LoCoMo {p} {b}" for p in ("tune", "validate") for b in lbs] + [
        f"haystack {p} {b}" for p in ("tune", "report") for b in BUDGETS]
    out = ["| variant | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 1)]
    for name in ["floor", *names]:
        cells = [fmt(t.get(f"{name} locomo {b}", p)) for p in ("tune", "validate") for b in lbs]
        cells += [fmt(t.get(f"{name} hay {b}", (p, "all"))) for p in ("tune", "report") for b in BUDGETS]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    types = sorted({k[1][1] for k in t.counts if isinstance(k[1], tuple) and k[1][0] == "all" and k[1][1] != "all"})
    for b in BUDGETS:
        for p in ("all", "tune", "report"):
            out += ["", f"Haystack per question type, {p if p != 'all' else 'both halves'}, {b} tokens:", "",
                    "| variant | " + " | ".join(types) + " |", "|" + "---|" * (len(types) + 1)]
            for name in ["floor", *names]:
                out.append(f"| {name} | " + " | ".join(fmt(t.get(f"{name} hay {b}", (p, g))) for g in types) + " |")
    out += ["", "Categories below their floor (LoCoMo per half and category 1-4; haystack per question type,"
            " both halves), at every budget run:", ""]
    for name in names:
        below = []
        for b in lbs:
            groups = [("locomo", (p, c)) for p in ("tune", "validate") for c in (1, 2, 3, 4)]
            groups += [("hay", ("all", g)) for g in types]
            for kind, g in groups:
                mine, low = t.get(f"{name} {kind} {b}", g), t.get(f"floor {kind} {b}", g)
                if mine == mine and low == low and mine < low - 1e-9:
                    below.append(f"{kind} {g} @{b}: {mine:.3f} < {low:.3f}")
        out.append(f"- {name}: " + ("; ".join(below) if below else "none"))
    moved = [(key, got) for key, got in sorted(PER_QUESTION.items()) if len(set(got.values())) > 1]
    out += ["", f"Questions the variants answer differently ({len(moved)} (question, budget) pairs; evidence recall per variant):", ""]
    out += [f"- {kind} @{b} {q!r}: " + ", ".join(f"{n} {got.get(n, float('nan')):.2f}" for n in names)
            for (kind, b, q), got in moved]
    out.append(f"\n{time.perf_counter() - t0:.0f}s.")
    publish(out, "Recall: ranking variants (issue 16)", ".venv/bin/python bench/variants.py --write", args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
