"""Issue 13 side by side: a recall bench with the currency step off (today's ranking) and on.

    .venv/bin/python bench/currency.py SUITE [SUITE ...] [-- ARGS]

SUITE is a bench module with a `main(argv)` (current_truth, knowledge_update, haystack, recall).
Each runs twice in this one process, over the same indexes: first with
`gitmem.recall.search.Session._currency` replaced by a pass-through (the ranking before issue 13:
no supersession, no copy collapsing, no expiry), then as shipped. ARGS go to every suite (never
`--write`: the two tables are printed, and copied into bench/RESULTS.md by hand with this command).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gm  # noqa: E402,F401  (puts the checkout's gitmem on sys.path)
from gitmem.recall import search  # noqa: E402
from gitmem.recall.currency import Currency  # noqa: E402


@contextlib.contextmanager
def no_currency() -> Iterator[None]:
    saved = search.Session._currency

    def off(self: search.Session, ranked: list[Any], where: Any, at: Any, opts: Any) -> tuple[list[Any], Currency]:
        return ranked, Currency({}, {}, {})

    search.Session._currency = off  # type: ignore[method-assign]
    try:
        yield
    finally:
        search.Session._currency = saved  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    suites, rest = (argv[: argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    rest = [a for a in rest if a != "--write"]
    for name in suites:
        mod = importlib.import_module(name)
        for label, ctx in (("BEFORE (currency step off)", no_currency()), ("AFTER (issue 13)", contextlib.nullcontext())):
            t0 = time.perf_counter()
            print(f"\n===== {name}: {label} =====", flush=True)
            with ctx:
                mod.main(rest)
            print(f"({time.perf_counter() - t0:.0f}s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
