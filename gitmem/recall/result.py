"""Result records: a chunk row (and the commits it names) as the typed `Result` recall returns,
its JSON object, its one-line rendering, excerpts, and packing results into a token budget."""

# No `from __future__ import annotations` in the modules of the read path that define NamedTuples:
# typing.NamedTuple turns each string annotation into a ForwardRef, which compile()s it, ~50k
# instructions a field at every import (153 fields: ~8 M of a CLI recall, bench/RESULTS.md "Recall
# latency, wave 9"). A name that only exists for mypy, or is defined further down, is quoted.

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, NamedTuple

from gitmem.index.store import CONTENT, PATH
from gitmem.layout import citation
from gitmem.lazyre import lazy

# No rendered result line costs less (see least_tokens).
MIN_RESULT_TOKENS = 6
OVER_BUDGET = "over budget:"  # starts the note that says results exist but none fits (render.py reads it)
# Under a token budget, a result whose text is longer than this many characters is returned as an
# excerpt: the sentences around its best match (0: off). Its citation still names the whole chunk.
# 300 -> 200 (issue 16, round 2): LoCoMo 1000 tokens +0.008 on both halves, haystack report half
# 0.853 -> 0.890 / 0.918 -> 0.939 at 1000 / 2000 tokens (bench/RESULTS.md, "ranking variants").
SNIPPET_CHARS = 200
_SENTENCE_END = lazy(r"(?<=[.!?])\s+")
_SPEAKER = lazy(r"[^\s:]{1,24}: ")  # "user: ", "Caroline: " — kept in front of an excerpt
ELLIPSIS = "…"


def iso(ts: int | None, tz: str | None = None) -> str | None:
    """Unix time as ISO 8601, in the commit's own timezone offset (e.g. "+0100") when known."""
    if ts is None:
        return None
    if tz and len(tz) == 5 and tz[0] in "+-" and tz[1:].isdigit():
        sign = 1 if tz[0] == "+" else -1
        zone = timezone(sign * timedelta(hours=int(tz[1:3]), minutes=int(tz[3:5])))
        return datetime.fromtimestamp(ts, zone).isoformat()
    return datetime.fromtimestamp(ts, UTC).isoformat()


def estimate_tokens(text: str) -> int:
    """~4 characters per token: good enough to pack a budget without a tokenizer on the read path."""
    return len(text) // 4 + 1


def least_tokens(row: sqlite3.Row | tuple[Any, ...]) -> int:
    # A lower bound of Result.tokens(): the line holds at least the content (or its excerpt), the
    # path and " (#L1@1234567)" (the kind may be left out, see Result.line).
    n = len(row[CONTENT])
    if SNIPPET_CHARS:
        n = min(n, SNIPPET_CHARS)
    return (n + len(row[PATH]) + 14) // 4 + 1


def excerpt(text: str, hits: Callable[[str], int], limit: int) -> str | None:
    """The sentences of `text` around its best match, at most ~`limit` characters, with "…" where
    text was left out; None when `text` fits as it is. `hits(sentence)` counts the question's
    terms a (lowercased) sentence holds. A speaker prefix ("user: ") is kept in front."""
    if len(text) <= limit:
        return None
    head = ""
    m = _SPEAKER.match(text)
    if m:
        head, text = m.group(0), text[m.end():]
    sents = _SENTENCE_END.split(text)
    scores = [hits(s.lower()) for s in sents]
    best = max(range(len(sents)), key=lambda i: (scores[i], -i))
    room = limit - len(head)
    if len(sents[best]) >= room:  # one long sentence: a window of it around its first match
        piece = _window(sents[best], hits, room)
        lo, hi = piece[0] != sents[best][0] or best > 0, True
        return f"{head}{ELLIPSIS if lo else ''}{piece}{ELLIPSIS if hi else ''}"
    i = j = best
    used = len(sents[best])
    # Grow towards the next sentence first (an answer usually follows what it answers), then back.
    while True:
        grew = False
        for k in (j + 1, i - 1):
            if 0 <= k < len(sents) and used + 1 + len(sents[k]) <= room:
                used += 1 + len(sents[k])
                if k == j + 1:
                    j = k
                else:
                    i = k
                grew = True
        if not grew:
            break
    body = " ".join(sents[i: j + 1])
    return f"{head}{ELLIPSIS if i > 0 else ''}{body}{ELLIPSIS if j < len(sents) - 1 else ''}"


def _window(sentence: str, hits: Callable[[str], int], room: int) -> str:
    """`room` characters of one long sentence, starting a little before its first matching word."""
    words = sentence.split(" ")
    first = next((n for n, w in enumerate(words) if hits(w.lower())), 0)
    start = max(0, first - 3)
    out: list[str] = []
    size = 0
    for w in words[start:]:
        if size + len(w) + 1 > room and out:
            break
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:room]


class Ended(NamedTuple):
    """When a version left memory: the commit that changed or removed it, and its time."""

    commit: str
    time: str | None


class Replacement(NamedTuple):
    """The newer statement that replaced a result (recall's currency step)."""

    id: int
    source: str | None
    reason: str


def _ended(r: "Result") -> bool:
    return r.valid_until is not None


def _marked(r: "Result") -> bool:
    return r.marked


# NamedTuples, not dataclasses, for the records of the read path: creating a dataclass runs
# generated code through exec at import (~2-4 M instructions each, and `dataclasses` itself), paid
# by every CLI recall. A result is immutable either way; a changed copy is `r._replace(...)`.
class Result(NamedTuple):
    """One recall result: a chunk version as it stood between two commits (docs/json-contract.md,
    gitmem/schemas/result.json). Immutable; `to_json` writes the fields in declaration order,
    so a new field is added here, once (with its JSON rule in _JSON_WHEN when it is not always
    present)."""

    id: int | None
    kind: str
    fact: bool
    content: str
    entities: tuple[str, ...]
    confidence: float | None
    timestamp: str | None
    event_start: str | None
    event_end: str | None
    record_time: str | None
    status: str
    source: str
    path: str
    lines: tuple[int, int]
    heading: str | None
    commit: str | None
    score: float | None
    # Present when this version later left memory.
    valid_until: Ended | None = None
    successor: int | None = None
    # What recall's currency step decided (gitmem/recall/currency.py): written on search answers only.
    superseded_by: Replacement | None = None
    copies: tuple[str, ...] = ()
    past: bool = False
    excerpt: bool = False
    marked: bool = False

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the `result` schema."""
        out: dict[str, Any] = {}
        for name, value in zip(self._fields, self):
            when = _JSON_WHEN.get(name)
            if when is None or when(self):
                out[name] = _plain(value)
        return out

    def line(self) -> str:
        """The compact one-result form shared by the text and Markdown renderers and budget packing.

        Every token of it is paid for inside an agent's budget, so it says only what the citation
        does not: the kind unless it is a plain note, the date unless the cited file is that day's
        log (measured on LoCoMo: 0.782 -> 0.789 at 1000 tokens, more results fit)."""
        bits = [] if self.kind == "note" else [self.kind]
        if self.confidence is not None:
            bits.append(f"c={self.confidence:.2f}")
        stamp = self.timestamp
        if stamp and stamp not in self.source.split("#", 1)[0]:
            bits.append(stamp)
        head = f"[{' '.join(bits)}] " if bits else ""
        return f"{head}{self.content} ({self.source}){self.marks()}"

    def marks(self) -> str:
        """What recall's currency step says of the result, as line text."""
        marks = ""
        if self.past:
            marks += f" [past: until {self.event_end}]"
        if self.superseded_by is not None:
            marks += f" [superseded by {self.superseded_by.source}]"
        if self.copies:
            marks += f" [also in {', '.join(self.copies)}]"
        return marks

    def tokens(self) -> int:
        """What the result costs inside a token budget: its rendered line."""
        return estimate_tokens(self.line())


# The JSON rule of each field not always written: written when `rule(result)` is true.
_JSON_WHEN: dict[str, Callable[[Result], bool]] = {
    "valid_until": _ended, "successor": _ended,
    "superseded_by": _marked, "copies": _marked, "past": _marked,
    "excerpt": lambda r: r.excerpt,
    "marked": lambda r: False,  # never written: it says the currency fields above are
}


def _plain(value: Any) -> Any:
    """A field value as JSON data: records as objects, tuples as arrays."""
    if isinstance(value, tuple):
        if hasattr(value, "_asdict"):
            return {k: _plain(v) for k, v in value._asdict().items()}
        return [_plain(v) for v in value]
    return value


def to_result(r: sqlite3.Row | dict[str, Any], commits: dict[int, sqlite3.Row], score: float | None,
              uncommitted: bool = False, at: int | None = None) -> Result:
    """One result record. `at` is the as-of position: status is relative to it (a version that
    was current then is "current" in that answer, with `valid_until` saying when it later changed)."""
    keys = r.keys()
    frm = commits.get(r["valid_from"]) if "valid_from" in keys else None
    to = commits.get(r["valid_to"]) if "valid_to" in keys and r["valid_to"] else None
    oid = frm["oid"] if frm else None
    record_time = iso(frm["commit_time"], frm["commit_tz"]) if frm else None
    ended = to is not None and (at is None or r["valid_to"] <= at)
    status = "uncommitted" if uncommitted else ("current" if not ended else
                                                ("superseded" if r["successor"] else "removed"))
    return Result(
        id=None if uncommitted else r["id"],
        kind=r["kind"],
        fact=bool(r["fact"]),
        content=r["content"],
        entities=tuple(r["entities"].split()) if r["entities"] else (),
        confidence=r["confidence"],
        timestamp=r["event_start"] or (record_time[:10] if record_time else None),
        event_start=r["event_start"],
        event_end=r["event_end"],
        record_time=record_time,
        status=status,
        source=citation(r["path"], r["start_line"], r["end_line"], oid),
        path=r["path"],
        lines=(r["start_line"], r["end_line"]),
        heading=r["heading"],
        commit=oid,
        score=round(score, 4) if score is not None else None,
        valid_until=Ended(to["oid"], iso(to["commit_time"], to["commit_tz"])) if to is not None else None,
        successor=r["successor"] if to is not None else None,
    )


def pack(results: list[Result], budget: int) -> list[Result]:
    """Keep the best results, in rank order, whose rendered lines fit in `budget` tokens."""
    out: list[Result] = []
    used = 0
    for r in results:
        cost = r.tokens()
        if used + cost > budget:
            continue
        out.append(r)
        used += cost
    return out
