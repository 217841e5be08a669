"""Issue 13, recency among close calls: each suite run once per variant, in one process over the
same indexes (gitmem/recall/currency.py `newer_first`).

    .venv/bin/python bench/recency.py SUITE [SUITE ...] [--variants off,e0.2,u0.2] [-- ARGS]

SUITE is a bench module with a `main(argv)` (current_truth, knowledge_update, recall). A variant
is `off` (no recency step), `eM` (entity recency, margin M), `uM` (entity and untyped recency,
both margin M) or `eAuB` (entity margin A, untyped margin B), each optionally followed by `a`
(attribute recency on: `_same_thing`, ties included) or `at` (attribute recency without the
no-question-word ties); without it attribute recency is off. A final `o` turns wave 6's slot
recency and open expiries off (`e0.1ao`: the ranking before wave 6, but for its attribution fix).
A suffix `-win`, `-day`, `-qty`, `-op` or `-same` turns one of wave 7's rules off (written windows,
same-day ties, amounts, opinions in new words, a newer line on the same thing: see WAVE7), `-typed`
wave 8's typed answers (currency.TYPED_ANSWERS), `-w7` all of wave 7's (`e0.1a-w7`; the parse-side
changes of wave 7, in dates.ends and the lexicon, stay on).
ARGS go to every suite (never `--write`: the tables are printed and copied into
bench/RESULTS.md by hand with this command). Choose a margin on the tune halves, report the others.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gm  # noqa: E402,F401  (puts the checkout's gitmem on sys.path)
from gitmem.recall import currency  # noqa: E402


def margins(name: str) -> tuple[float, float, bool, bool, bool, bool]:
    """(entity margin, untyped margin, attribute recency, its ties, slot recency, open expiries) of
    a variant: off, eA, uM (= eMuM) or eAuB, optionally followed by `a` or `at`, then by `o` (old:
    wave 6's slot recency and open expiries off)."""
    if name == "off":
        return 0.0, 0.0, False, False, False, False
    m = re.fullmatch(r"(?:e([\d.]+))?(?:u([\d.]+))?(a|at)?(o)?", name)
    if m is None or not name or not (m.group(1) or m.group(2)):
        raise SystemExit(f"bad variant {name!r}: off, e0.1, u0.2, e0.1u0.2, e0.1a, e0.1at or e0.1ao")
    e, u, a, o = m.group(1), m.group(2), m.group(3), m.group(4) is None
    return float(e if e is not None else u), float(u or 0.0), a is not None, a == "a", o, o


# Wave 7's rules, each turned off by a suffix "-NAME" of a variant ("e0.1a-day"; "-w7": all of them).
WAVE7 = {"win": "WINDOW_EXPIRY", "day": "SAME_DAY_ATTRIBUTE", "qty": "QUANTITY_RECENCY", "op": "OPINION_RECENCY",
         "same": "SAME_THING_WORDS", "typed": "TYPED_ANSWERS"}


@contextlib.contextmanager
def variant(name: str) -> Iterator[None]:
    base, *offs = name.split("-")
    names = ("RECENCY_MARGIN", "UNTYPED_MARGIN", "ATTRIBUTE_RECENCY", "ATTRIBUTE_TIES", "SLOT_RECENCY", "OPEN_EXPIRY")
    off = [WAVE7[o] for o in offs if o in WAVE7] + ([v for k, v in WAVE7.items() if k != "typed"] if "w7" in offs else [])
    if any(o not in WAVE7 and o != "w7" for o in offs):
        raise SystemExit(f"bad variant {name!r}: a suffix is one of -{', -'.join(WAVE7)} or -w7")
    values = (*margins(base), *([False] * len(off)))
    names += tuple(off)
    saved = tuple(getattr(currency, n) for n in names)
    for n, v in zip(names, values):
        setattr(currency, n, v)
    try:
        yield
    finally:
        for n, v in zip(names, saved):
            setattr(currency, n, v)


def main(argv: list[str]) -> int:
    own, rest = (argv[: argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suites", nargs="+")
    ap.add_argument("--variants", default="off,e0.1,e0.1at,e0.1a")
    args = ap.parse_args(own)
    rest = [a for a in rest if a != "--write"]
    for name in args.suites:
        mod = importlib.import_module(name)
        for v in args.variants.split(","):
            t0 = time.perf_counter()
            print(f"\n===== {name}: recency {v} =====", flush=True)
            with variant(v):
                mod.main(rest)
            print(f"({time.perf_counter() - t0:.0f}s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
