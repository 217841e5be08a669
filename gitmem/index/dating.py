"""The last day of a statement that holds for a while only, read from its chunk version alone.

"Currently in Tokyo (Mar 3-Mar 10)", "On sabbatical through May", "Seconded to the Doha project
from 16 February to 30 April": each says when it stops holding. That day depends on the chunk's
text, path (a daily log's day is when it was written), entities, fact flag and event window, and
on nothing asked, so the indexer stores it with the chunk version (`chunks.last_day`, versioned by
index/rules.py) and recall compares it with the day asked about (recall/currency.py `bounded`)
instead of reading every candidate's text again. Imported by the hook path: the parser's modules
only.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from gitmem.index.store import CONTENT, ENTITIES, EVENT_END, EVENT_START, FACT, PATH
from gitmem.index.supersede import is_event, moved_in
from gitmem.layout import log_date
from gitmem.lazyre import lazy
from gitmem.parse.dates import ends, may_end

# A statement that says it holds for now: its written window of days is the while it holds.
FOR_NOW = lazy(r"\b(?:currently|right now|at the moment|for now|temporarily|this week)\b", re.I)


def last_day(row: Any, windows: bool = True, open_ends: bool = True) -> str | None:
    """The last day (ISO; a written window's end as written) of a statement that holds for a while
    only, else None: one that says it holds for now and writes its window of days, one about
    someone whose written window had not ended when it was written (`windows`: `ahead`), or a
    state about someone that names its end and no start (`open_ends`: `open_end`). A single day
    is no window: every line of a daily log has its log's day as event time. `row`: a chunk row
    in index/store.py's column order. `windows` and `open_ends` are recall's rules
    (currency.WINDOW_EXPIRY, OPEN_EXPIRY): the index stores the reading with both on."""
    start, end, content = row[EVENT_START], row[EVENT_END], row[CONTENT]
    if start and end and start < end and (FOR_NOW.search(content) or windows and ahead(row)):
        return str(end)
    return open_end(row) if open_ends else None


def ahead(row: Any) -> bool:
    """Whether a statement about someone writes a window of days that had not ended when it was
    written ("On the road with the band's tour, 8 May to 14 June", "Seconded to the Doha project from
    16 February to 30 April"): a stay, posting or plan for that while, not a report of a past one
    ("Lived in Porto 2019-2021" was written after its end)."""
    if not (row[ENTITIES] or row[FACT]):
        return False
    logged = log_date(row[PATH])
    if logged is None or row[EVENT_END][:10] < logged.isoformat():
        return False
    # A month named alone ("Became design director in June 2025") is when, not a while.
    start, end = date.fromisoformat(row[EVENT_START][:10]), date.fromisoformat(row[EVENT_END][:10])
    return not (start.day == 1 and end.month == start.month and (end + timedelta(days=1)).day == 1)


def open_end(row: Any) -> str | None:
    """The last day of a state about someone that names its end and no start ("through May",
    "until the 14th": parse.dates.ends, read from the day it was written)."""
    content = row[CONTENT]
    # may_end first: a cheap necessary condition of dates.ends, which every row would reach.
    # A move names when it happened, not a while it lasts ("Moved to Arisaig over the summer, keeps the
    # boat there now" is no stay over at the end of August: wave 20, RULES "9").
    if not (row[ENTITIES] or row[FACT]) or not may_end(content) or is_event(content) or moved_in(content):
        return None
    logged = log_date(row[PATH])
    written = logged or event_day(row)
    last = ends(content, written) if written else None
    if last is None or (logged is not None and last < logged):
        return None
    return last.isoformat()


def event_day(row: Any) -> date | None:
    """The day a statement's event starts, for one not in a daily log (when it was written then)."""
    start = row[EVENT_START]
    return date.fromisoformat(start[:10]) if start else None
