"""Merging two machines' `bank/.reflect.json` (used by `gitmem merge-driver`).

Both machines reflected since the merge base, each over its own facts. The merged state:
- `through`, `through_time`, `model`, `run`: from ours when ours reflected since the base, else
  from theirs. In a merge "ours" is the branch being merged into and in a rebase it is the
  upstream being built on: either way its `through` is on the first-parent chain the next
  reflection walks, and the other side's facts arrive after it (with the merge commit, or as the
  replayed commits), so they are read again rather than skipped.
- `blocks`: each side's changed hashes (ours on a tie); a block both sides wrote is stamped by the
  page merge (pages.stamp), which is how reflection knows it may rewrite it.
- `opinions`: the union; an opinion both sides updated keeps ours and gains the evidence only
  theirs counted (by evidence key), its delta added to the confidence within the usual bounds, and
  the union of both histories. Nothing either machine learned is dropped.
"""

from __future__ import annotations

import json
from typing import Any

from gitmem.reflect.confidence import CEILING, FLOOR, evidence_key
from gitmem.reflect.state import State


def _load(data: bytes) -> State | None:
    if not data.strip():
        return State()
    state = State.from_bytes(data)
    return None if state.notes else state


def _changed(base: Any, side: Any) -> bool:
    return json.dumps(base, sort_keys=True) != json.dumps(side, sort_keys=True)


def _merge_opinion(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    out = dict(ours)
    delta = 0.0
    for rel in ("supports", "contradicts"):
        have = {evidence_key(e.get("path", ""), e.get("content", "")) for e in ours.get(rel, []) if isinstance(e, dict)}
        extra = [e for e in theirs.get(rel, []) if isinstance(e, dict)
                 and evidence_key(e.get("path", ""), e.get("content", "")) not in have]
        out[rel] = list(ours.get(rel, [])) + extra
        delta += sum(float(e.get("delta", 0.0)) for e in extra)
    if delta and isinstance(ours.get("confidence"), (int, float)):
        out["confidence"] = round(min(CEILING, max(FLOOR, float(ours["confidence"]) + delta)), 2)
    history = [*ours.get("history", []), *theirs.get("history", [])]
    unique = {json.dumps(h, sort_keys=True): h for h in history if isinstance(h, dict)}
    out["history"] = sorted(unique.values(), key=lambda h: (str(h.get("at")), json.dumps(h, sort_keys=True)))
    out["last_updated"] = max(str(ours.get("last_updated") or ""), str(theirs.get("last_updated") or "")) or None
    return out


def merge_states(base: State, ours: State, theirs: State) -> State:
    ours_moved = _changed(base.through, ours.through) or _changed(base.run, ours.run)
    lead = ours if ours_moved or not _changed(base.through, theirs.through) else theirs
    blocks = dict(base.blocks)
    for side in (theirs, ours):  # ours last: it wins where both changed a block
        for key, value in side.blocks.items():
            if base.blocks.get(key) != value:
                blocks[key] = value
        for key in base.blocks:
            if key not in side.blocks:
                blocks.pop(key, None)
    opinions: dict[str, dict[str, Any]] = {}
    for key in sorted(set(base.opinions) | set(ours.opinions) | set(theirs.opinions)):
        o, a, b = base.opinions.get(key), ours.opinions.get(key), theirs.opinions.get(key)
        if a is not None and b is not None and _changed(a, b):
            opinions[key] = a if not _changed(o, b) else b if not _changed(o, a) else _merge_opinion(a, b)
        elif a is not None or b is not None:
            opinions[key] = a if a is not None else b  # type: ignore[assignment]
    return State(through=lead.through, through_time=lead.through_time, model=lead.model,
                 blocks=dict(sorted(blocks.items())), opinions=opinions, run=lead.run)


def merge_state_bytes(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The merged state file, or None when a side is not a state file we understand (the driver
    then falls back to a text merge, conflicts and all)."""
    states = [_load(d) for d in (base, ours, theirs)]
    if any(s is None for s in states):
        return None
    o, a, b = states
    assert o is not None and a is not None and b is not None
    return merge_states(o, a, b).to_bytes()
