"""What `gitmem review --discard` turned down, so reflection does not propose it again.

Kept in `.memory/reflect-discarded.json` (derived data of this clone, never committed: deleting it
only means a discarded proposal may come back once). Three things are remembered:
- the key of the proposal's window (the facts it read, see `window_key`): a run over the same facts
  proposes nothing, however often it is asked (`reflect --if-needed` from cron, the model cache);
- per opinion (its state-file key), the keys of the evidence whose confidence move was discarded:
  that evidence never counts again for that opinion, new evidence still does;
- per page, a hash of each proposed content that was discarded: the same content is not written
  again, while a page that changed because new facts arrived is.
A run whose every change was discarded before writes no proposal (`reflect` says why).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, NamedTuple

from gitmem.layout import REFLECT_DISCARDED
from gitmem.safefile import write_atomic
from gitmem.workspace import Workspace

MAX_PER_KEY = 200  # oldest entries drop out first, so the file stays small


class Discarded(NamedTuple):
    windows: set[str]  # window_key of each discarded proposal
    evidence: dict[str, set[str]]  # opinion key -> evidence keys (confidence.evidence_key)
    pages: dict[str, set[str]]  # path -> content hashes


def content_key(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def window_key(since: str | None, facts: list[tuple[str, int]], logs: list[str]) -> str:
    """What a proposal was made from: the last reflection point, the (path, chunk id) of each
    fact read (chunk ids are content hashes, stable across index rebuilds) and the logs to draft."""
    payload = json.dumps([since, sorted(facts), sorted(logs)])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:20]


def _listed(raw: Any) -> dict[str, list[str]]:
    if not isinstance(raw, dict):
        return {}
    return {k: [x for x in v if isinstance(x, str)] for k, v in raw.items() if isinstance(k, str) and isinstance(v, list)}


def _read(ws: Workspace) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
    try:
        raw = json.loads((ws.derived / REFLECT_DISCARDED).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return [], {}, {}  # absent or damaged: nothing remembered (derived data, safe to lose)
    if not isinstance(raw, dict):
        return [], {}, {}
    windows = raw.get("windows")
    return ([w for w in windows if isinstance(w, str)] if isinstance(windows, list) else [],
            _listed(raw.get("evidence")), _listed(raw.get("pages")))


def load(ws: Workspace) -> Discarded:
    windows, evidence, pages = _read(ws)
    return Discarded(set(windows), {k: set(v) for k, v in evidence.items()}, {k: set(v) for k, v in pages.items()})


def remember(ws: Workspace, window: str | None, evidence: dict[str, list[str]], pages: dict[str, str]) -> None:
    """Add one discarded proposal: its window key, {opinion key: [evidence key]} and {path: content hash}."""
    old_windows, old_ev, old_pages = _read(ws)
    if window:
        old_windows = ([w for w in old_windows if w != window] + [window])[-MAX_PER_KEY:]
    for key, items in evidence.items():
        merged = [x for x in old_ev.get(key, []) if x not in items] + items
        old_ev[key] = merged[-MAX_PER_KEY:]
    for path, h in pages.items():
        merged = [x for x in old_pages.get(path, []) if x != h] + [h]
        old_pages[path] = merged[-MAX_PER_KEY:]
    data = json.dumps({"windows": old_windows, "evidence": old_ev, "pages": old_pages}, indent=1, sort_keys=True) + "\n"
    write_atomic(ws.ensure_derived() / REFLECT_DISCARDED, data.encode("utf-8"))
