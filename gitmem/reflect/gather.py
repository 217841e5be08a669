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

from gitmem.errors import GitmemError
from gitmem.index import store
from gitmem.recall.result import Result
from gitmem.recall.search import Options, Session

MAX_ENTITY_FACTS = 60
MAX_PAIRS_PER_OPINION = 4
MAX_PAIRS = 24


@dataclass
class Window:
    start: int  # facts with valid_from > start ...
    end: int  # ... and <= end (positions on the first-parent chain)
    through: str  # oid at `end`
    through_time: int
    facts: list[Result] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # every file with a chunk added in the window
    capped: bool = False
    notes: list[str] = field(default_factory=list)


def position_of(s: Session, oid: str | None) -> int | None:
    if oid is None:
        return 0
    return store.position_of(s.conn, oid)


def tip_position(s: Session) -> int:
    return store.last_position(s.conn)


def window(s: Session, start: int, max_facts: int) -> Window:
    """The facts added after position `start`, up to max_facts (whole commits only)."""
    end = tip_position(s)
    rows = store.memory_added_after(s.conn, start)
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
    paths = store.paths_added(s.conn, start, end)
    return Window(start=start, end=end, through=commit["oid"], through_time=commit["commit_time"],
                  facts=s.results(rows), paths=paths, capped=capped)


def entity_facts(s: Session, key: str) -> list[Result]:
    """Current facts and notes (outside bank/) that mention entity `key`, newest first, capped."""
    return s.results(store.memory_mentioning(s.conn, key, MAX_ENTITY_FACTS))


def current_facts(s: Session, kind: str) -> list[Result]:
    return s.results(store.current_facts(s.conn, kind))


def candidates(s: Session, opinion: Result, pool: list[Result], base: str) -> list[Result]:
    """Facts in `pool` worth judging against `opinion`: sharing an entity first (newest first),
    then FTS5 neighbours of the statement among the pool; at most MAX_PAIRS_PER_OPINION."""
    by_id = {r.id: r for r in pool if r.fact and r.kind != "opinion" and r.id != opinion.id}
    ents = set(opinion.entities)
    shared = [r for r in by_id.values() if ents.intersection(r.entities)]
    shared.sort(key=lambda r: (-(r.id or 0)))
    chosen = shared[:MAX_PAIRS_PER_OPINION]
    if len(chosen) < MAX_PAIRS_PER_OPINION and by_id:
        ans = s.search(opinion.content, Options(k=20, as_of=base, kinds=("world", "experience", "observation")))
        for r in ans.results:
            hit = by_id.get(r.id)
            if hit is not None and hit not in chosen:
                chosen.append(hit)
            if len(chosen) >= MAX_PAIRS_PER_OPINION:
                break
    return chosen


def current_opinions(s: Session) -> list[Result]:
    """The opinions in memory now, without those a newer statement replaced (`gitmem why` shows
    which): reflection neither curates nor judges a belief the user has since changed."""
    rows = store.current_opinions(s.conn)
    replaced = store.superseded_by(s.conn, [r["id"] for r in rows])
    return s.results([r for r in rows if r["id"] not in replaced])


def replaced_in_index(s: Session, facts: list[Result]) -> dict[int | None, Result]:
    """{id of a fact in `facts`: the statement that replaced it}, as the index derived it
    (store.superseded_by, now): a page lists as current only what recall holds current."""
    links = store.superseded_by(s.conn, [r.id for r in facts if r.id is not None])
    known = {r.id: r for r in facts}
    missing = sorted({link.new for link in links.values()} - set(known))
    if missing:
        known.update((r.id, r) for r in s.results_by_id(missing))
    return {old: known[link.new] for old, link in links.items() if link.new in known}


def rename_statements(s: Session) -> list[str]:
    """The current memory text (outside bank/) that may state a rename or an alias, oldest first."""
    from gitmem.parse.entities import RENAME_WORDS

    return store.current_text_containing(s.conn, RENAME_WORDS)


def known_entities(s: Session, keys: set[str]) -> set[str]:
    """The entity keys among `keys` that some chunk @mentions."""
    return set(store.entity_known(s.conn, sorted(keys)))
