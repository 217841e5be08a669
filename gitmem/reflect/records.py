"""The typed values a reflection passes between its steps, and their JSON.

- `Opinion`: an opinion as this run leaves it (confidence, evidence, its Retain bullet), built by
  run.py, written by pages.py onto bank/opinions.md and the entity pages, and recorded in the
  state file (bank/.reflect.json) by `to_state`.
- The changes a proposal makes: `PageChange`, `RetainChange`, `OpinionChange`. Their JSON is the
  `changes` list of `gitmem reflect --json` and of the state file's run summary
  (docs/json-contract.md); `read_changes` turns that list back into typed values for the review
  (CLI and HTML), skipping entries it cannot read (the state file is data anyone can edit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple


@dataclass(frozen=True)
class Opinion:
    """One opinion after this reflection. `history`, `supports` and `contradicts` are the state
    file's records (JSON carried over from earlier runs, plus this run's), kept as they are."""

    key: str  # the opinion's key in the state file
    id: int | None  # its chunk id in the index
    statement: str
    entities: tuple[str, ...]
    stated: float | None  # the confidence written in memory (None: none written)
    confidence: float
    delta: float  # the move this reflection proposes
    last_updated: str
    source: str  # citation of the statement
    history: list[dict[str, Any]]
    supports: list[dict[str, Any]]
    contradicts: list[dict[str, Any]]
    bullet: str  # "- O(c=0.75) ..." for bank/opinions.md, "" when the statement makes no valid bullet

    @property
    def stated_text(self) -> str:
        return "no confidence" if self.stated is None else f"c={self.stated:.2f}"

    def to_state(self) -> dict[str, Any]:
        """Its record in the state file (bank/.reflect.json)."""
        return {"statement": self.statement, "entities": list(self.entities), "stated": self.stated,
                "confidence": self.confidence, "last_updated": self.last_updated, "source": self.source,
                "history": self.history, "supports": self.supports, "contradicts": self.contradicts,
                "current": True}

    def to_json(self) -> dict[str, Any]:
        """Its line in `gitmem reflect --json` (`opinions`)."""
        return {"statement": self.statement, "confidence": self.confidence, "delta": self.delta,
                "source": self.source}


class PageChange(NamedTuple):
    """Reflection (re)wrote blocks of a bank page."""

    path: str
    what: str  # "entity", "opinions", "world", "experience", "memory proposals"
    status: str  # "added" or "updated"
    blocks: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "what": self.what, "status": self.status, "blocks": self.blocks}


class RetainChange(NamedTuple):
    """Reflection appended a Retain section to a daily log."""

    path: str
    bullets: list[str]

    @property
    def status(self) -> str:
        return "updated"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "what": "retain", "status": self.status, "bullets": self.bullets}


class EvidenceStep(NamedTuple):
    relation: str
    strength: str
    delta: float
    source: str
    content: str  # the evidence text, so a review reads without `gitmem show`
    path: str
    by: str = "model"  # who judged it: "model", or the rule that read it from the words (judge.ruled)

    @property
    def label(self) -> str:
        """How a review names it: "contradicts (weak, -0.05, model)" (reflect, review and review --html)."""
        return f"{self.relation} ({self.strength}, {self.delta:+.2f}, {self.by})"


class OpinionChange(NamedTuple):
    """An opinion's confidence moved (or was stated) in bank/opinions.md."""

    path: str
    key: str  # the opinion's key in the state file
    opinion: str
    before: float
    after: float
    delta: float
    clamped: bool
    evidence: list[EvidenceStep]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "key": self.key, "opinion": self.opinion, "before": self.before, "after": self.after,
                "delta": self.delta, "clamped": self.clamped, "evidence": [e._asdict() for e in self.evidence]}


Change = PageChange | RetainChange | OpinionChange


def listed(c: PageChange | RetainChange, bullets: str) -> str:
    """What a page change wrote: its blocks, else how many Retain bullets it appended (`bullets`
    names them: "Retain bullets")."""
    blocks = c.blocks if isinstance(c, PageChange) else []
    added = c.bullets if isinstance(c, RetainChange) else []
    return ", ".join(blocks) or f"{len(added)} {bullets}"


def read_changes(raw: object) -> list[Change]:
    """The typed changes of a `changes` JSON list; entries that are not readable are left out."""
    out: list[Change] = []
    for c in raw if isinstance(raw, list) else []:
        if not isinstance(c, dict):
            continue
        try:
            out.append(_change(c))
        except (KeyError, TypeError, ValueError):
            continue
    return out


def _change(c: dict[str, Any]) -> Change:
    path = str(c["path"])
    if "opinion" in c:  # the JSON shape of OpinionChange (see its to_json)
        evidence = [EvidenceStep(str(e.get("relation", "")), str(e.get("strength", "")), float(e.get("delta", 0)),
                                 str(e.get("source", "")), str(e.get("content", "")), str(e.get("path", "")),
                                 str(e.get("by", "model")))
                    for e in c.get("evidence") or [] if isinstance(e, dict)]
        return OpinionChange(path, str(c.get("key", "")), str(c["opinion"]), float(c["before"]), float(c["after"]),
                             float(c.get("delta", 0)), bool(c.get("clamped")), evidence)
    if c.get("what") == "retain":
        return RetainChange(path, [str(b) for b in c.get("bullets") or []])
    return PageChange(path, str(c.get("what", "")), str(c.get("status", "")), [str(b) for b in c.get("blocks") or []])
