"""Result records: a chunk row (and the commits it names) as the record recall returns, its
one-line rendering, and packing results into a token budget."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from gitmem.index.store import CONTENT, PATH
from gitmem.layout import citation

# No rendered result line costs less (see least_tokens).
MIN_RESULT_TOKENS = 6
# Under a token budget, a result whose text is longer than this many characters is returned as an
# excerpt: the sentences around its best match (0: off). Its citation still names the whole chunk.
# 300 -> 200 (issue 16, round 2): LoCoMo 1000 tokens +0.008 on both halves, haystack report half
# 0.853 -> 0.890 / 0.918 -> 0.939 at 1000 / 2000 tokens (bench/RESULTS.md, "ranking variants").
SNIPPET_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SPEAKER = re.compile(r"[^\s:]{1,24}: ")  # "user: ", "Caroline: " — kept in front of an excerpt
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
    # A lower bound of estimate_tokens(render_line(result)): the line holds at least the content
    # (or its excerpt), the path and " (#L1@1234567)" (the kind may be left out, see render_line).
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


def to_result(r: sqlite3.Row | dict[str, Any], commits: dict[int, sqlite3.Row], score: float | None,
              uncommitted: bool = False, at: int | None = None) -> dict[str, Any]:
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
    res: dict[str, Any] = {
        "id": None if uncommitted else r["id"],
        "kind": r["kind"],
        "fact": bool(r["fact"]),
        "content": r["content"],
        "entities": r["entities"].split() if r["entities"] else [],
        "confidence": r["confidence"],
        "timestamp": r["event_start"] or (record_time[:10] if record_time else None),
        "event_start": r["event_start"],
        "event_end": r["event_end"],
        "record_time": record_time,
        "status": status,
        "source": citation(r["path"], r["start_line"], r["end_line"], oid),
        "path": r["path"],
        "lines": [r["start_line"], r["end_line"]],
        "heading": r["heading"],
        "commit": oid,
        "score": round(score, 4) if score is not None else None,
    }
    if to is not None:
        res["valid_until"] = {"commit": to["oid"], "time": iso(to["commit_time"], to["commit_tz"])}
        res["successor"] = r["successor"]
    return res


def render_line(r: dict[str, Any]) -> str:
    """The compact one-result form shared by the text and Markdown renderers and budget packing.

    Every token of it is paid for inside an agent's budget, so it says only what the citation
    does not: the kind unless it is a plain note, the date unless the cited file is that day's log
    (measured on LoCoMo: 0.782 -> 0.789 at 1000 tokens, more results fit)."""
    bits = [] if r["kind"] == "note" else [r["kind"]]
    if r.get("confidence") is not None:
        bits.append(f"c={r['confidence']:.2f}")
    stamp = r.get("timestamp")
    if stamp and stamp not in r["source"].split("#", 1)[0]:
        bits.append(stamp)
    head = f"[{' '.join(bits)}] " if bits else ""
    return f"{head}{r['content']} ({r['source']}){currency_marks(r)}"


def currency_marks(r: dict[str, Any]) -> str:
    """What recall's currency step says of a result (gitmem/recall/currency.py), as line text."""
    marks = ""
    if r.get("past"):
        marks += f" [past: until {r['event_end']}]"
    link = r.get("superseded_by")
    if link:
        marks += f" [superseded by {link['source']}]"
    if r.get("copies"):
        marks += f" [also in {', '.join(r['copies'])}]"
    return marks


def pack(results: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Keep the best results, in rank order, whose rendered lines fit in `budget` tokens."""
    out: list[dict[str, Any]] = []
    used = 0
    for r in results:
        cost = estimate_tokens(render_line(r))
        if used + cost > budget:
            continue
        out.append(r)
        used += cost
    return out
