"""A rule switch of recall/currency.py on beside off, every current-truth set, lexical and hybrid (wave 17).

    .venv/bin/python bench/truth_switch.py COUNT_ANSWERS [VALUE_ANEW ...] [--semantic] [--half heldout6]

bench/current_truth.py --semantic asks every set with its full report and the plain FTS5 floor (a
floor index is built per question day: slow on a shared host); this asks only what decides a rule:
each set's top-1 current and its false supersession (bench/current_truth.py's `judge` and
`marked_superseded`), as shipped and with the switch off, in one process on the workspaces
bench/truth_learn.py's `dump` built, and lists every question on which the two disagree. Several
switches: each off in turn beside everything on (asked once per set and mode).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from current_truth import HALVES, K, build, embed, judge, load, marked_superseded  # noqa: E402
from gm import Asker  # noqa: E402
from truth_learn import workspace  # noqa: E402

from gitmem.recall import currency  # noqa: E402


def ask_all(root: Path, half: str, dense: Any) -> tuple[list[tuple[str, bool]], list[str]]:
    """Each question's (text, top-1 current) and the kept facts marked superseded or not returned."""
    scenarios = load(HALVES[half])
    tops: list[tuple[str, bool]] = []
    false: list[str] = []
    with Asker(root, dense=dense) as asker:
        for s in scenarios:
            for q in s.questions:
                tops.append((f"{s.name}: {q.q}", judge(q, s, asker.ask(q.q, as_of=q.as_of, k=K, semantic=dense is not None)).top1_current))
            for kp in s.keep:
                res = asker.ask(kp.text, as_of=kp.as_of, k=K, semantic=dense is not None)
                hit = next((r for r in res if kp.text.lower() in r.content.lower()), None)
                if hit is None or marked_superseded(hit):
                    false.append(f"{s.name}: {kp.text}")
    return tops, false


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="+", metavar="name",
                    help="True/False rule switches of gitmem/recall/currency.py: each is turned off in turn, "
                         "the rest on (what ships is asked once)")
    ap.add_argument("--semantic", action="store_true", help="hybrid recall too (each workspace embedded once)")
    ap.add_argument("--half", default="all", choices=[*HALVES, "all"])
    args = ap.parse_args(argv)
    for name in args.names:
        if not isinstance(getattr(currency, name, None), bool):
            ap.error(f"{name} is no rule switch of gitmem/recall/currency.py (a True/False constant there)")
    embedder = None
    if args.semantic:
        from gitmem.recall.semantic import InProcess, load_embedder

        embedder = load_embedder()
    modes = ["lexical"] + (["hybrid"] if embedder else [])
    cols = [(m, n) for n in args.names for m in modes]
    print("| set | questions | " + " | ".join(f"{n} {m} on / off" for m, n in cols) + " | false supersession "
          + " / ".join(f"{n} {m} on / off" for m, n in cols) + " |")
    print("|---|---:|" + "---:|" * len(cols) + "---:|")
    diffs: list[str] = []
    tot: dict[tuple[str, str], list[int]] = {c: [0, 0, 0, 0, 0] for c in cols}
    for half in (list(HALVES) if args.half == "all" else [args.half]):
        root = workspace(half)
        if not (root / ".memory" / "index.sqlite").exists():
            build(load(HALVES[half]), root)
        cells: dict[tuple[str, str], tuple[str, str]] = {}
        for mode in modes:
            dense = None
            if mode == "hybrid":
                embed(root)
                dense = InProcess(embedder)
            on, f_on = ask_all(root, half, dense)
            n_on = sum(t for _, t in on)
            for name in args.names:
                saved = getattr(currency, name)
                setattr(currency, name, False)
                try:
                    off, f_off = ask_all(root, half, dense)
                finally:
                    setattr(currency, name, saved)
                n_off = sum(t for _, t in off)
                cells[(mode, name)] = (f"{n_on} / {n_off}", f"{len(f_on)} / {len(f_off)}")
                t = tot[(mode, name)]
                tot[(mode, name)] = [t[0] + len(on), t[1] + n_on, t[2] + n_off, t[3] + len(f_on), t[4] + len(f_off)]
                tag = f"{name} {mode} {half}"
                diffs += [f"- {tag} {'+' if a[1] else '-'} {a[0]}" for a, b in zip(on, off) if a[1] != b[1]]
                diffs += [f"- {tag} false supersession on only: {x}" for x in sorted(set(f_on) - set(f_off))]
                diffs += [f"- {tag} false supersession off only: {x}" for x in sorted(set(f_off) - set(f_on))]
        print(f"| {half} | {len(on)} | " + " | ".join(cells[c][0] for c in cols) + " | "
              + " / ".join(cells[c][1] for c in cols) + " |", flush=True)
    first = tot[cols[0]]
    print(f"| all | {first[0]} | " + " | ".join(f"{tot[c][1]} / {tot[c][2]}" for c in cols) + " | "
          + " / ".join(f"{tot[c][3]} / {tot[c][4]}" for c in cols) + " |")
    print("\n" + ("\n".join(diffs) if diffs else "no question differs"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
