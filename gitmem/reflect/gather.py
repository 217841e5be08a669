"""What a reflection reads from the index (through a recall Session).

- the *window*: chunks added on the indexed branch after the last reflection (`through` in the
  state file) or after `--since`, oldest first, cut at a commit boundary once `reflect.max_facts`
  facts are collected (the rest wait for the next run);
- *facts*: typed Retain facts plus notes that @mention an entity, outside `bank/` — bank pages
  are reflection's own output (and human curation of it), never its input, so merging a proposal
  cannot feed on itself;
- the current facts about an entity, the current W/B facts, the current opinions;
- candidate evidence for an opinion: new facts sharing an entity, then FTS5 neighbours (capped).
Everything is read as of the base commit (never the uncommitted working tree).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gitmem.errors import GitmemError
from gitmem.recall.search import Options, Session

_COLS = ("c.id, c.path, c.start_line, c.end_line, c.heading, c.kind, c.fact, c.entities, c.confidence,"
         " c.event_start, c.event_end, c.content, c.valid_from, c.valid_to, c.successor")
_MEMORY = "c.path NOT LIKE 'bank/%' AND (c.fact = 1 OR c.entities != '')"

MAX_ENTITY_FACTS = 60
MAX_PAIRS_PER_OPINION = 4
MAX_PAIRS = 24


@dataclass
class Window:
    start: int  # facts with valid_from > start ...
    end: int  # ... and <= end (positions on the first-parent chain)
    through: str  # oid at `end`
    through_time: int
    facts: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # every file with a chunk added in the window
    capped: bool = False
    notes: list[str] = field(default_factory=list)


def position_of(s: Session, oid: str | None) -> int | None:
    if oid is None:
        return 0
    row = s.conn.execute("SELECT pos FROM commits WHERE oid = ?", (oid,)).fetchone()
    return int(row[0]) if row else None


def tip_position(s: Session) -> int:
    row = s.conn.execute("SELECT max(pos) FROM commits").fetchone()
    return int(row[0] or 0)


def window(s: Session, start: int, max_facts: int) -> Window:
    """The facts added after position `start`, up to max_facts (whole commits only)."""
    end = tip_position(s)
    rows = s.conn.execute(
        f"SELECT {_COLS} FROM chunks c WHERE c.valid_from > ? AND c.valid_to IS NULL AND {_MEMORY}"
        " ORDER BY c.valid_from, c.path, c.start_line", (start,)).fetchall()
    capped = False
    if len(rows) > max_facts:
        # Cut after the commit holding fact number max_facts... unless that commit alone is over
        # the cap, then take it whole (a run must always make progress).
        cut_pos = rows[max_facts - 1]["valid_from"]
        if rows[max_facts]["valid_from"] == cut_pos:
            earlier = [r for r in rows if r["valid_from"] < cut_pos]
            cut_pos = cut_pos if not earlier else earlier[-1]["valid_from"]
        rows = [r for r in rows if r["valid_from"] <= cut_pos]
        end, capped = cut_pos, True
    commit = s.commit_at(end)
    if commit is None:
        raise GitmemError("the index has no commits", "commit some memory first, then run `gitmem reflect`")
    paths = [r[0] for r in s.conn.execute(
        "SELECT DISTINCT path FROM chunks WHERE valid_from > ? AND valid_from <= ? AND valid_to IS NULL ORDER BY path",
        (start, end))]
    return Window(start=start, end=end, through=commit["oid"], through_time=commit["commit_time"],
                  facts=s.results(rows), paths=paths, capped=capped)


def entity_facts(s: Session, key: str) -> list[dict[str, Any]]:
    """Current facts and notes (outside bank/) that mention entity `key`, newest first, capped."""
    rows = s.conn.execute(
        f"SELECT {_COLS} FROM chunk_entities e JOIN chunks c ON c.id = e.chunk_id"
        f" WHERE e.entity = ? AND c.valid_to IS NULL AND {_MEMORY} AND c.kind != 'opinion'"
        " ORDER BY c.valid_from DESC, c.path, c.start_line LIMIT ?", (key, MAX_ENTITY_FACTS)).fetchall()
    return s.results(rows)


def current_facts(s: Session, kind: str) -> list[dict[str, Any]]:
    rows = s.conn.execute(
        f"SELECT {_COLS} FROM chunks c WHERE c.valid_to IS NULL AND c.fact = 1 AND c.kind = ?"
        " AND c.path NOT LIKE 'bank/%' ORDER BY coalesce(c.event_start, ''), c.path, c.start_line", (kind,)).fetchall()
    return s.results(rows)


def candidates(s: Session, opinion: dict[str, Any], pool: list[dict[str, Any]], base: str) -> list[dict[str, Any]]:
    """Facts in `pool` worth judging against `opinion`: sharing an entity first (newest first),
    then FTS5 neighbours of the statement among the pool; at most MAX_PAIRS_PER_OPINION."""
    by_id = {r["id"]: r for r in pool if r["fact"] and r["kind"] != "opinion" and r["id"] != opinion["id"]}
    ents = set(opinion["entities"])
    shared = [r for r in by_id.values() if ents.intersection(r["entities"])]
    shared.sort(key=lambda r: (-(r["id"] or 0)))
    chosen = shared[:MAX_PAIRS_PER_OPINION]
    if len(chosen) < MAX_PAIRS_PER_OPINION and by_id:
        ans = s.search(opinion["content"], Options(k=20, as_of=base, kinds=("world", "experience", "observation")))
        for r in ans.results:
            hit = by_id.get(r["id"])
            if hit is not None and hit not in chosen:
                chosen.append(hit)
            if len(chosen) >= MAX_PAIRS_PER_OPINION:
                break
    return chosen


def current_opinions(s: Session) -> list[dict[str, Any]]:
    rows = s.conn.execute(
        f"SELECT {_COLS} FROM chunks c WHERE c.valid_to IS NULL AND c.fact = 1 AND c.kind = 'opinion'"
        " AND c.path NOT LIKE 'bank/%' ORDER BY c.valid_from, c.path, c.start_line").fetchall()
    return s.results(rows)


# Words every rename or alias statement has (parse.renames reads the statements themselves).
_RENAME_WORDS = ("formerly", "previously", "renamed", "now called", "now named", "aka", "a.k.a.", "also known as")


def rename_statements(s: Session) -> list[str]:
    """The current memory text (outside bank/) that may state a rename or an alias, oldest first."""
    like = " OR ".join("lower(c.content) LIKE ?" for _ in _RENAME_WORDS)
    rows = s.conn.execute(
        f"SELECT c.content FROM chunks c WHERE c.valid_to IS NULL AND c.path NOT LIKE 'bank/%' AND ({like})"
        " ORDER BY c.valid_from, c.path, c.start_line", [f"%{w}%" for w in _RENAME_WORDS]).fetchall()
    return [r[0] for r in rows]


def known_entities(s: Session, keys: set[str]) -> set[str]:
    """The entity keys among `keys` that some current chunk @mentions."""
    if not keys:
        return set()
    marks = ",".join("?" * len(keys))
    rows = s.conn.execute(
        f"SELECT DISTINCT e.entity FROM chunk_entities e JOIN chunks c ON c.id = e.chunk_id"
        f" WHERE c.valid_to IS NULL AND e.entity IN ({marks})", sorted(keys)).fetchall()
    return {r[0] for r in rows}
