"""The one place the benchmarks touch gitmem's indexer and recall API.

Recall is a session (gitmem/recall/search.py), a pure ranking function (rank.py) and result
records with their rendering and packing (result.py); when those names move, only this module
changes. Everything a benchmark needs:
index a workspace, ask it questions as of a time (top k or a token budget), cost a result the way
`pack` does, and switch off a ranking stage for a diagnostic run.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gitmem.index.indexer import update  # noqa: E402
from gitmem.parse import entity_key  # noqa: E402
from gitmem.recall import rank as _ranking  # noqa: E402
from gitmem.recall.result import Result, estimate_tokens, pack  # noqa: E402
from gitmem.recall.search import Options, Session  # noqa: E402
from gitmem.workspace import Workspace  # noqa: E402

__all__ = ["Asker", "Options", "Result", "cost", "entity_key", "estimate_tokens", "index", "line_result",
           "no_smoothing", "pack"]


def index(root: Path) -> None:
    """Bring the workspace's index up to its HEAD with gitmem's own indexer (a no-op when current)."""
    update(Workspace(root))


def cost(result: Result) -> int:
    """Tokens a result costs inside an agent's budget (its rendered line, as `pack` counts it)."""
    return result.tokens()


def line_result(path: str, line: int, day: str | None, text: str) -> Result:
    """One line of a log as a plain note result (a baseline's answer), costed like gitmem's."""
    return Result(id=None, kind="note", fact=False, content=text, entities=(), confidence=None, timestamp=day,
                  event_start=None, event_end=None, record_time=None, status="current",
                  source=f"{path}#L{line}@0000000", path=path, lines=(line, line), heading=None, commit=None,
                  score=None)


class Asker:
    """An open index of one workspace, asked in-process (no catch-up: the bench indexed it)."""

    def __init__(self, root: Path, dense: Any = None) -> None:
        self.root = root
        # dense: semantic.InProcess, for hybrid recall (bench/hybrid.py)
        self.session = Session(Workspace(root), catch_up=False, dense=dense)

    def ask(self, question: str, *, as_of: str, k: int = 10, budget: int = 0,
            include_history: bool = False, semantic: bool = False) -> list[Result]:
        opts = Options(k=k, budget=budget, as_of=as_of, include_history=include_history, semantic=semantic)
        return self.session.search(question, opts).results

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> Asker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def no_smoothing() -> Iterator[None]:
    """Today's ranking with neighbour smoothing off (a diagnostic, never a shipped setting)."""
    saved = _ranking.NEIGHBOUR_WEIGHTS
    _ranking.NEIGHBOUR_WEIGHTS = ()  # type: ignore[assignment]
    try:
        yield
    finally:
        _ranking.NEIGHBOUR_WEIGHTS = saved
