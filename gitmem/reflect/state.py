"""`bank/.reflect.json`: what reflection remembers between runs, kept in git with the pages.

The state file is written by every proposal commit, so it is merged together with the pages it
describes and "the last reflection" survives clones, rebuilds of the index and deleted caches.
It is JSON (not Markdown) so the indexer ignores it. Keys (all written sorted, 2-space indent,
so the same state gives the same bytes):

- `version`: 1.
- `through`: oid of the last commit whose facts were reflected (the proposal's base, or an older
  commit when `reflect.max_facts` cut the run short). The next run reads facts added after it.
- `through_time`: that commit's committer time (ISO 8601).
- `model`: the model identity used (None for --no-llm).
- `blocks`: {"<path>#<block>": sha256 of the block's text as generated}: a block whose current text
  hashes differently was edited by a person and is never overwritten.
- `opinions`: {key: {statement, entities, stated, confidence, last_updated, source, history:
  [{at, commit, confidence, delta, reason}], supports: [evidence], contradicts: [evidence]}}
  where evidence = {content, source, path, commit, strength, delta, at}. `gitmem opinions
  --history` reads the trajectory through `opinion_history`.
- `run`: the machine-readable summary of the proposal (changes, evidence, confidence deltas,
  skipped blocks, rejected model output) that `gitmem review` shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gitmem.layout import STATE_PATH
from gitmem.timeline import git
from gitmem.workspace import Workspace

VERSION = 1


@dataclass
class State:
    through: str | None = None
    through_time: str | None = None
    model: str | None = None
    blocks: dict[str, str] = field(default_factory=dict)
    opinions: dict[str, dict[str, Any]] = field(default_factory=dict)
    run: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # problems reading the file (not written back)

    def to_bytes(self) -> bytes:
        data = {"version": VERSION, "through": self.through, "through_time": self.through_time, "model": self.model,
                "blocks": self.blocks, "opinions": self.opinions, "run": self.run}
        return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes | None) -> State:
        if data is None:
            return cls()
        try:
            raw = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            return cls(notes=[f"{STATE_PATH} is not valid JSON: reflecting as if for the first time"])
        if not isinstance(raw, dict) or raw.get("version") != VERSION:
            return cls(notes=[f"{STATE_PATH} has an unknown format: reflecting as if for the first time"])

        def _dict(key: str) -> dict[str, Any]:
            value = raw.get(key)
            return value if isinstance(value, dict) else {}

        through = raw.get("through")
        return cls(
            through=through if isinstance(through, str) and len(through) == 40 else None,
            through_time=raw.get("through_time") if isinstance(raw.get("through_time"), str) else None,
            model=raw.get("model") if isinstance(raw.get("model"), str) else None,
            blocks={k: v for k, v in _dict("blocks").items() if isinstance(v, str)},
            opinions={k: v for k, v in _dict("opinions").items() if isinstance(v, dict)},
            run=_dict("run"),
        )


def read_state(root: Any, commit: str | None) -> State:
    """The state file as committed in `commit` (a fresh State when absent)."""
    if commit is None:
        return State()
    with git.CatFile(root) as cat:
        return State.from_bytes(cat.read(f"{commit}:{STATE_PATH}"))


def opinion_history(ws: Workspace, rev: str = "HEAD") -> dict[str, Any]:
    """Each reflected opinion's confidence trajectory, from the state file at `rev`:
    {"through": oid|None, "opinions": [{key, statement, entities, confidence, last_updated,
    history: [{at, commit, confidence, delta, reason}]}]} sorted by statement."""
    oid = git.resolve(ws.root, rev)
    state = read_state(ws.root, oid)
    items = []
    for key, op in state.opinions.items():
        items.append({"key": key, "statement": op.get("statement"), "entities": op.get("entities", []),
                      "confidence": op.get("confidence"), "last_updated": op.get("last_updated"),
                      "history": op.get("history", [])})
    items.sort(key=lambda o: (str(o["statement"]), o["key"]))
    return {"through": state.through, "opinions": items, "notes": state.notes}
