"""Turn what a user types for WHEN (`--as-of`, `--since`, `--until`) into a point on the timeline.
(Which indexed position a point falls on is the index's answer: gitmem/index/store.py position_at.)

Accepted, in this order: relative spans (`30d`, `2w`, `12h`, `6m`, `1y`, meaning that long before
now), `now`/`today`/`yesterday`, ISO dates and datetimes (`2025-11-30`, `2025-11-30T15:00`,
`2025-11-30 15:00+01:00`), and any git revision (`HEAD~3`, a tag, a branch, an oid).
A bare date used as an upper bound means the end of that day; as a lower bound, its start.
Dates without a timezone are read in the local timezone (set TZ to change it).
"""

# Annotations are evaluated at import (no __future__ import): see recall/result.py.

import re
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import NamedTuple

from gitmem.errors import BadRevision
from gitmem.timeline import git
from gitmem.lazyre import lazy

_RELATIVE = lazy(r"^\s*(\d+)\s*(h|d|w|m|y)\s*$", re.IGNORECASE)
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1),
          "m": timedelta(days=30), "y": timedelta(days=365)}


class Point(NamedTuple):  # not a dataclass: every CLI recall imports this (see recall/result.py)
    """A resolved WHEN: a timestamp (unix seconds) and, for a revision, the exact commit."""

    text: str
    timestamp: int
    oid: str | None = None


def _local(dt: datetime) -> datetime:
    return dt if dt.tzinfo else dt.astimezone()  # naive -> local timezone


_OUT_OF_RANGE_HINT = "use a date between 1900-01-01 and 9999-12-30, or a shorter span (30d, 2w, 1y)"


def _out_of_range(text: str) -> BadRevision:
    return BadRevision(f"{text!r} is too far in the past or the future to be a point in time", _OUT_OF_RANGE_HINT)


def parse_time(text: str, *, end_of_day: bool, now: datetime | None = None) -> datetime | None:
    """A datetime for a date-like WHEN, or None when `text` is not date-like. A date-like WHEN
    that no datetime can hold (0001-01-01 in a timezone east of UTC, 99999999999d) is a
    BadRevision, not a crash."""
    try:
        dt = _parse_time(text, end_of_day=end_of_day, now=now)
        if dt is not None:
            dt.timestamp()  # the one use every caller makes of it: fails for year 1 / 9999 edges
        return dt
    except (OverflowError, ValueError, OSError):
        raise _out_of_range(text) from None


def _parse_time(text: str, *, end_of_day: bool, now: datetime | None) -> datetime | None:
    t = text.strip()
    now = now or datetime.now().astimezone()
    low = t.lower()
    if low in ("now", ""):
        return now
    if low in ("today", "yesterday"):
        day = now.date() - timedelta(days=1 if low == "yesterday" else 0)
        return _local(datetime.combine(day, time.max if end_of_day else time.min))
    m = _RELATIVE.match(t)
    if m:
        return now - int(m.group(1)) * _UNITS[m.group(2).lower()]
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t):
        try:
            day = date.fromisoformat(t)
        except ValueError:
            return None
        return _local(datetime.combine(day, time.max if end_of_day else time.min))
    if re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d", t):
        try:
            return _local(datetime.fromisoformat(t))  # Python 3.11+ reads a trailing "Z"
        except ValueError:
            return None
    return None


def resolve_point(repo: Path, text: str, *, end_of_day: bool = True) -> Point:
    """Resolve WHEN to a Point; raises BadRevision with a next step when it names nothing."""
    dt = parse_time(text, end_of_day=end_of_day)
    if dt is not None:
        return Point(text, int(dt.timestamp()))  # parse_time has checked that this works
    oid = git.resolve(repo, text)
    if oid is None:
        raise BadRevision(
            f"cannot read {text!r} as a date, a span or a git revision",
            "use a date (2025-11-30), a datetime (2025-11-30T15:00), a span (30d, 2w) or a revision (HEAD~3, a tag)",
        )
    ct = int(git.out(repo, "show", "-s", "--format=%ct", oid))
    return Point(text, ct, oid)

