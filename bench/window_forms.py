"""Which benchmark questions wave 19's time-word readings reach, and their answers before and after
(parse/timewords.MORE_FORMS: seasons, fixed-day holidays, dates without a year, "on the Nth";
recall/currency.WINDOW_KEEPS: a question about a past window keeps the replaced statement that held
in it).

    .venv/bin/python bench/window_forms.py [--ask] [--budgets 1000,2000]

Counts, per set and half, the LoCoMo questions (categories 1-4, asked as of the last session) and
the LongMemEval haystack questions (asked on their day) whose window MORE_FORMS changes, by form,
and the window questions whose index holds a supersession (the only ones WINDOW_KEEPS can touch).
`--ask` asks each reached question lexically and hybrid (vectors filled as bench/hybrid.py does,
cached under bench/out/vectors/), both settings off and on, at each budget: evidence-turn recall and
the top 3. Every other question takes the same code path either way: its answer cannot change.
"""

from __future__ import annotations

import argparse
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
import recall  # noqa: E402
import variants  # noqa: E402
from benchlib import LOCOMO, covered, half, patched  # noqa: E402
from gm import Asker  # noqa: E402

from gitmem.parse import timewords  # noqa: E402
from gitmem.recall import currency, semantic  # noqa: E402

OFF = {"timewords.MORE_FORMS": False, "currency.WINDOW_KEEPS": False}
ON = {"timewords.MORE_FORMS": True, "currency.WINDOW_KEEPS": True}
MODULES = {"timewords": timewords, "currency": currency}


def form(question: str, ref: date) -> str | None:
    """The new reading that names the question's window (None: the same window either way)."""
    with patched(MODULES, OFF):
        old = timewords.time_window(question, ref)
    new = timewords.time_window(question, ref)
    if old == new:
        return None
    if old is not None:
        return "changed"
    text = timewords._ORDINAL_OF.sub(r"\1 ", question)
    if timewords._SEASON.search(text):
        return "season"
    if timewords._HOLIDAY.search(text):
        return "holiday"
    if timewords._ON_THE.search(text) and timewords.find_dates(text, ref) is None:
        return "on the Nth"
    return "date without a year"


def links(root: Path) -> int:
    conn = sqlite3.connect(root / ".memory" / "index.sqlite")
    try:
        return int(conn.execute("select count(*) from supersessions").fetchone()[0])
    finally:
        conn.close()


class Reached:
    def __init__(self, name: str, root: Path, question: str, as_of: str, where: list[Any], why: str) -> None:
        self.name, self.root, self.question, self.as_of, self.where, self.why = name, root, question, as_of, where, why


def reached() -> list[Reached]:
    out: list[Reached] = []
    tally: dict[str, int] = {}
    for ci, sample in enumerate(json.loads(LOCOMO.read_text())):
        part = "tune" if ci < 5 else "validate"
        built = variants.locomo_built(sample)
        ref = date.fromisoformat(built.last[:10])
        held = links(built.root)
        for qa in sample["qa"]:
            if qa["category"] not in (1, 2, 3, 4):
                continue
            why = form(qa["question"], ref)
            if why is None and held and timewords.time_window(qa["question"], ref) is not None:
                why = "window, index with supersessions"
            if why is None:
                continue
            key = f"locomo {part} {why}"
            tally[key] = tally.get(key, 0) + 1
            ids = recall.evidence_ids(qa.get("evidence", []), built.lines)
            if ids:
                out.append(Reached(f"locomo {part} c{qa['category']} {sample['sample_id']}", built.root, qa["question"],
                                   built.last, [built.lines[x] for x in ids], why))
    data = haystack.load()
    pool = haystack.session_pool(data)
    for q in data:
        h = haystack.build(q, pool)
        if not h.answer_turns:
            continue
        ref = date.fromisoformat(h.day[:10])
        why = form(h.question, ref)
        if why is None and timewords.time_window(h.question, ref) is not None and links(h.built.root):
            why = "window, index with supersessions"
        if why is None:
            continue
        key = f"hay {half(h.qid)} {why}"
        tally[key] = tally.get(key, 0) + 1
        out.append(Reached(f"hay {half(h.qid)} {h.qtype} {h.qid}", h.built.root, h.question, h.day,
                           [h.built.lines[t] for t in h.answer_turns], why))
    for key in sorted(tally):
        print(f"reached: {key}: {tally[key]}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ask", action="store_true")
    ap.add_argument("--budgets", default="500,1000,2000")
    args = ap.parse_args(argv)
    found = reached()
    for r in found:
        print(f"{r.name} [{r.why}] {r.question!r}")
    if not args.ask:
        return 0
    budgets = [int(b) for b in args.budgets.split(",")]
    emb = hybrid.CachedEmbedder(writer=True)
    dense = semantic.InProcess(emb)
    sums: dict[tuple[str, str, int], float] = {}
    for r in found:
        hybrid.fill(r.root, emb)
        for sem in (False, True):
            for label, mode in (("off", OFF), ("on", ON)):
                with patched(MODULES, mode), Asker(r.root, dense=dense) as asker:
                    for b in budgets:
                        res = asker.ask(r.question, as_of=r.as_of, budget=b, semantic=sem)
                        got = sum(covered(res, w) for w in r.where) / len(r.where)
                        key = (r.name.split()[0] + " " + r.name.split()[1], f"{'hybrid' if sem else 'lexical'} {label}", b)
                        sums[key] = sums.get(key, 0.0) + got
                        top = " | ".join(str(getattr(x, "content", x))[:50] for x in res[:3])
                        print(f"{r.name} {'hybrid' if sem else 'lexical'} {label} @{b}: {got:.2f} {r.question!r} top: {top}")
        emb.save()
    for key in sorted(sums):
        print(f"sum of evidence recall: {key[0]} {key[1]} @{key[2]}: {sums[key]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
