"""Bank pages: generated content lives in marked blocks; everything else belongs to people.

    <!-- gitmem:begin facts -->
    ...generated...
    <!-- gitmem:end facts -->

`merge_page` is the only way reflection changes a page:
- text outside the markers is kept byte for byte; a missing block is appended at the end;
- a block is replaced only when its current text hashes to what reflection wrote last time
  (recorded in bank/.reflect.json). Otherwise a person edited it (or wrote it) and it is left
  alone, and the proposal says so. A block a person deleted is not re-added either.
Rendering helpers turn fact records (recall `Result`s) into lines with citations.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from gitmem.layout import EVIDENCE_RELATIONS, NO_EVIDENCE, evidence_line, record_lines
from gitmem.parse import aliases_line, is_retain_heading
from gitmem.parse.attributes import move_places, names_place
from gitmem.recall.result import Result
from gitmem.reflect.records import Opinion
from gitmem.reflect.safety import clean_inline
from gitmem.lazyre import lazy

_MARK = lazy(r"^<!-- gitmem:(begin|end) ([a-z0-9-]{1,40}) -->$")
KIND_LETTER = {"world": "W", "experience": "B", "opinion": "O", "observation": "S", "note": "N"}


def begin(name: str) -> str:
    return f"<!-- gitmem:begin {name} -->"


def end(name: str) -> str:
    return f"<!-- gitmem:end {name} -->"


def block_hash(inner: str) -> str:
    norm = "\n".join(ln.rstrip() for ln in inner.strip("\n").split("\n"))
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:16]


# A block that gitmem itself rewrote outside reflection (the merge driver joining two machines'
# versions, `gitmem forget` removing lines) starts with a stamp: the hash of the rest of the block.
# While the rest still hashes to the stamp nobody edited it by hand, so reflection may replace it
# even though it no longer matches the hash reflection recorded.
_STAMP = lazy(r"^<!-- gitmem:stamp ([0-9a-f]{16}) -->$")


def stamp(lines: list[str]) -> str:
    """The stamp line for a block whose inner lines (without a stamp) are `lines`."""
    return f"<!-- gitmem:stamp {block_hash(chr(10).join(lines))} -->"


def unstamped(lines: list[str]) -> list[str]:
    """Inner lines without a leading stamp line."""
    return lines[1:] if lines and _STAMP.match(lines[0].strip()) else lines


def stamp_ok(inner: str) -> bool:
    """The block starts with a stamp that still matches the rest: gitmem wrote it, nobody edited it."""
    lines = inner.split("\n")
    m = _STAMP.match(lines[0].strip()) if lines else None
    return m is not None and m.group(1) == block_hash("\n".join(lines[1:]))


@dataclass(frozen=True)
class Span:
    begin: int  # line index of the begin marker
    end: int  # line index of the end marker
    inner: str


def find_blocks(text: str) -> tuple[dict[str, Span], set[str]]:
    """Well-formed blocks by name, and the names that are malformed or repeated (left alone)."""
    lines = text.split("\n")
    found: dict[str, Span] = {}
    bad: set[str] = set()
    open_name: str | None = None
    open_at = 0
    for i, line in enumerate(lines):
        m = _MARK.match(line.strip())
        if not m:
            continue
        what, name = m.groups()
        if what == "begin":
            if open_name is not None:
                bad.add(open_name)
            open_name, open_at = name, i
        elif open_name == name:
            if name in found:
                bad.add(name)
            found[name] = Span(open_at, i, "\n".join(lines[open_at + 1 : i]))
            open_name = None
        else:
            bad.add(name)
    if open_name is not None:
        bad.add(open_name)
    for name in bad:
        found.pop(name, None)
    return found, bad


@dataclass
class PageResult:
    text: str
    hashes: dict[str, str] = field(default_factory=dict)  # state keys -> hash, for every block we own
    skipped: list[dict[str, str]] = field(default_factory=list)
    written: list[str] = field(default_factory=list)


def merge_page(path: str, old: str | None, title: str, blocks: list[tuple[str, str | None]],
               recorded: dict[str, str]) -> PageResult:
    """The page at `path` with `blocks` [(name, inner text)] merged in (see the module docstring).
    Inner text None removes the block, only when reflection wrote it and nobody edited it since."""
    text = old if old is not None else f"# {clean_inline(title, 120)}\n"
    res = PageResult(text=text)
    spans, bad = find_blocks(text)
    for name, given in blocks:
        key = f"{path}#{name}"
        rec = recorded.get(key)
        if given is None:
            span = spans.get(name)
            if span is not None and rec is not None and block_hash(span.inner) == rec:
                lines = res.text.split("\n")
                first = span.begin - 1 if span.begin > 0 and not lines[span.begin - 1].strip() else span.begin
                del lines[first : span.end + 1]
                res.text = "\n".join(lines)
                res.written.append(name)
                spans, bad = find_blocks(res.text)
            elif span is not None and rec is not None:
                res.hashes[key] = rec  # edited by hand: kept, still ours to compare next time
            continue
        inner = given.strip("\n")
        if name in bad:
            res.skipped.append({"path": path, "block": name, "reason": "its gitmem markers are broken or repeated"})
            if rec:
                res.hashes[key] = rec
            continue
        span = spans.get(name)
        if span is not None:
            if rec is None:
                res.skipped.append({"path": path, "block": name,
                                    "reason": "not written by reflection (no record in bank/.reflect.json)"})
                continue
            if block_hash(span.inner) != rec and not stamp_ok(span.inner):
                res.skipped.append({"path": path, "block": name, "reason": "edited by hand since the last reflection"})
                res.hashes[key] = rec
                continue
            lines = res.text.split("\n")
            lines[span.begin + 1 : span.end] = inner.split("\n")
            res.text = "\n".join(lines)
            spans, bad = find_blocks(res.text)
        else:
            if rec is not None:
                res.skipped.append({"path": path, "block": name, "reason": "removed by hand since the last reflection"})
                res.hashes[key] = rec
                continue
            if res.text and not res.text.endswith("\n"):
                res.text += "\n"
            res.text += f"\n{begin(name)}\n{inner}\n{end(name)}\n"
            spans, bad = find_blocks(res.text)
        res.hashes[key] = block_hash(inner)
        res.written.append(name)
    return res


# --------------------------------------------------------------------------- rendering


def fact_line(r: Result, *, with_kind: bool = True, limit: int = 300) -> str:
    """`- W: text (path#Lx-Ly@sha7)` for one fact record."""
    kind = KIND_LETTER.get(r.kind, "N")
    body = clean_inline(r.content, limit)
    return f"- {kind}: {body} ({r.source})" if with_kind else f"- {body} ({r.source})"


def dated(r: Result) -> str:
    start, stop = r.event_start, r.event_end
    if start and stop and stop != start:
        return f"{start} – {stop}"
    return start or (r.record_time or "")[:10] or "undated"


# --------------------------------------------------------------------------- what is current

# Words that make a fact a state with a shelf life rather than an event ("Currently in Marrakech").
_PRESENT = lazy(r"\b(?:currently|right now|at the moment|for now|this week|these days)\b", re.I)


def _when(r: Result) -> tuple[str, str]:
    """Sort key in time: the event date (else the commit date), then the commit time."""
    rec = r.record_time or ""
    return (r.event_start or rec[:10], rec)


def expired(r: Result, today: str) -> bool:
    """A time-bounded fact whose window ended before `today` (ISO date): a stated range
    ("Nov 27–Dec 1, 2025"), a present-tense state ("currently", "for now") dated before today, or a
    world fact told before the day it names ("Fibre install booked for 2025-11-25", "Turns 40 on
    2025-11-29"): an announcement, which that day's passing makes history (what happened is a later
    line's to say). The agent's own acts are not announcements: "I booked the train for Nov 14" was
    done when written."""
    end = r.event_end or r.event_start
    if not end or end >= today:
        return False
    return _ranged(r) or announced(r) or bool(_PRESENT.search(r.content))


def _ranged(r: Result) -> bool:
    return bool(r.event_start) and r.event_start != r.event_end


def announced(r: Result) -> bool:
    """A world fact written before the day it names (see `expired`)."""
    # Without a commit time nothing says when it was written: no announcement.
    return r.kind == "world" and r.event_start is not None and r.record_time is not None \
        and r.event_start > r.record_time[:10]


def moves_supersede(facts: list[Result]) -> dict[int | None, Result]:
    """{id of a replaced fact: the fact that replaced it}, by one conservative rule local to pages:
    a later fact "moved/shipped from X to Y" about an entity replaces that entity's earlier facts
    that name X but not Y ("Stays in Berlin at a friend's place" after the Castle shipped from
    Berlin). Reflection adds the index's links to it (gather.replaced_in_index); alone it is the
    default `Supersede` of `current_and_past`."""
    out: dict[int | None, Result] = {}
    for mover in facts:
        move = move_places(mover.content)
        if move is None or move.left is None:
            continue
        ents = set(mover.entities)
        for r in facts:
            if r is mover or r.id in out or not ents.intersection(r.entities) or _when(r) >= _when(mover):
                continue
            if names_place(r.content, move.left) and not names_place(r.content, move.reached):
                out[r.id] = mover
    return out


Supersede = Callable[[list[Result]], dict[int | None, Result]]


class Past(NamedTuple):
    fact: Result
    why: str  # "ended 2025-12-01", "was due 2025-11-25" or "replaced by <citation>"


def current_and_past(facts: list[Result], today: str,
                     supersede: Supersede = moves_supersede) -> tuple[list[Result], list[Past]]:
    """Facts split into current ones and past ones (expired or replaced), each newest first, each
    listed once (the same text twice keeps the newer)."""
    unique: dict[str, Result] = {}
    for r in sorted(facts, key=_when):
        unique[" ".join(r.content.lower().split()).rstrip(".")] = r  # the newer one wins
    rows = sorted(unique.values(), key=_when, reverse=True)
    replaced = supersede(rows)
    current: list[Result] = []
    past: list[Past] = []
    for r in rows:
        if r.id in replaced:
            past.append(Past(r, f"replaced by {replaced[r.id].source}"))
        elif expired(r, today):
            due = announced(r) and not _ranged(r)
            past.append(Past(r, f"{'was due' if due else 'ended'} {r.event_end or r.event_start}"))
        else:
            current.append(r)
    return current, past


def curatable(r: Result) -> bool:
    """False for a bullet in a Retain section that is not a valid Retain fact: `gitmem lint`
    rejects it, so reflection never copies it onto a page."""
    return r.fact or not any(is_retain_heading(h) for h in (r.heading or "").split(" > "))


_GROUPS = (("world", "World"), ("experience", "What I did"), ("observation", "Observations"), ("note", "Notes"))


def entity_blocks(summary: str | None, facts: list[Result], opinions: list[Opinion], today: str,
                  aliases: list[str] | None = None, supersede: Supersede = moves_supersede) -> list[tuple[str, str | None]]:
    """The generated blocks of an entity page: summary, aliases, facts (current ones grouped by
    kind, newest first, then the past ones marked), opinions. Every fact appears exactly once.
    A block given as None is removed from the page when reflection still owns it (the Timeline of
    older versions listed every fact a second time)."""
    blocks: list[tuple[str, str | None]] = []
    if summary:
        blocks.append(("summary", clean_inline(summary, 400)))
    if aliases:
        blocks.append(("aliases", aliases_line([clean_inline(a, 80) for a in aliases])))
    current, past = current_and_past([r for r in facts if curatable(r)], today, supersede)
    if current or past:
        out = ["## Facts"]
        for kind, title in _GROUPS:
            group = [r for r in current if (r.kind if r.kind in KIND_LETTER else "note") == kind]
            if group:
                out += ["", f"### {title}", *(f"- {dated(r)}: {clean_inline(r.content, 300)} ({r.source})" for r in group)]
        if past:
            out += ["", "### Past", *(f"- {dated(p.fact)}: {clean_inline(p.fact.content, 300)} ({p.fact.source}; {p.why})"
                                     for p in past)]
        blocks.append(("facts", "\n".join(out)))
    blocks.append(("timeline", None))
    if opinions:
        blocks.append(("opinions", "## Opinions\n" + "\n".join(
            f"- c={o.confidence:.2f}: {clean_inline(o.statement, 240)} (see bank/opinions.md)" for o in opinions)))
    return blocks


def list_block(facts: list[Result]) -> str:
    return "\n".join(fact_line(r, with_kind=False) for r in facts) or "_(no current facts)_"


def opinions_block(opinions: list[Opinion]) -> str:
    """The bank/opinions.md block: one valid Retain bullet per opinion (so the index reads them as
    opinions with confidence), then the evidence in a separate section (never nested bullets)."""
    retain = [o.bullet for o in opinions if o.bullet]
    out = ["## Retain", *retain, "", "## Evidence"]
    for n, o in enumerate(opinions, 1):
        out += ["", f"### {n}. {clean_inline(o.statement, 120)}",
                *record_lines(o.confidence, o.stated_text, o.delta, o.last_updated, o.source)]
        for rel, evidence in zip(EVIDENCE_RELATIONS, (o.supports, o.contradicts)):
            for ev in evidence:
                out.append(evidence_line(rel, ev["strength"], ev["delta"], clean_inline(ev["content"], 200), ev["source"]))
        if not o.supports and not o.contradicts:
            out.append(f"- {NO_EVIDENCE}")
    return "\n".join(out)
