"""Time words in a question ("yesterday", "a couple of days ago", "last week", "in May", "in 2023")
as a window of days around a reference day (the as-of point, or today).

Recall uses the window softly: chunks dated inside it are boosted, nothing is filtered out (only
`--during` filters). So a window errs on the wide side: "a couple of days ago" is 1-4 days back,
"last week" the calendar week before this one plus a day either side. A pure function of the text
and the reference day; no I/O.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from gitmem.parse.dates import _MONTHS, find_dates
from gitmem.lazyre import lazy

Window = tuple[date, date]  # first and last day, inclusive

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "couple": 2, "a couple": 2, "a couple of": 2, "few": 3,
            "a few": 3, "several": 4}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_WORD = (r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
               r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_AGO = lazy(
    r"\b(?P<n>\d+|a couple of|a couple|couple of|a few|few|several|an?|one|two|three|four|five|six|seven|"
    r"eight|nine|ten)\s+(?P<unit>day|week|month|year)s?\s+(?:ago|back|before)\b", re.I)
_LAST = lazy(r"\b(?P<which>last|past|previous|this)\s+(?P<unit>week(?:end)?|month|year|"
                   + "|".join(_WEEKDAYS) + r")\b", re.I)
_IN_MONTH = lazy(rf"\b(?:in|during|since|of|from)\s+(?:early\s+|late\s+|mid-?\s*)?{_MONTH_WORD}\b"
                       r"(?:,?\s+(?P<y>\d{4}))?", re.I)
_IN_YEAR = lazy(r"\b(?:in|during|of|from)\s+(?:early\s+|late\s+)?(?P<y>(?:19|20)\d{2})\b", re.I)
_DAYWORD = lazy(r"\b(?P<w>yesterday|today|tonight|this morning|the other day|recently|lately)\b", re.I)

# A text that places something in time ("yesterday", "last weekend", "two weeks ago", "in July",
# "2022"): in a conversation these are the turns that report an event, what memory questions ask
# about (LoCoMo tune half: 42-87% of evidence turns per category hold one, 25% of all turns).
# "may" is left out (a verb far more often than the month). Recall's hybrid fusion credits them
# (semantic.ANCHOR_CREDIT) on every candidate near the head of a ranking, so the test is a set
# lookup over the text's words (a regex alternation cost ~40 us a turn, this ~3).
_ANCHOR_WORDS = frozenset(
    "yesterday today tonight tomorrow ago weekend january february march april june july august september"
    " october november december".split()
    + [d + s for d in ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun") for s in ("day", "days")])
_ANCHOR_AFTER = {
    "last": frozenset("night week weekend month year summer winter spring fall time".split() + list(_WEEKDAYS)),
    "next": frozenset("week weekend month year".split()),
    "this": frozenset("morning afternoon evening week weekend month year summer".split()),
}
_TOKENS = lazy(r"[^\W_]+")
_PAIR_OR_YEAR = lazy(r"(?<![^\W_])(?:(last|next|this) ([^\W_]+)|(?:19|20)\d\d(?![^\W_]))")


def anchored(text: str) -> bool:
    """Whether `text` places something in time: one of _ANCHOR_WORDS, a year 1900-2099, or "last" /
    "next" / "this" before a unit of time."""
    low = text.lower()
    if not _ANCHOR_WORDS.isdisjoint(_TOKENS.findall(low)):
        return True
    for m in _PAIR_OR_YEAR.finditer(low):
        if m.group(1) is None or m.group(2) in _ANCHOR_AFTER[m.group(1)]:
            return True
    return False


def _count(word: str) -> int:
    w = word.lower().strip()
    if w.isdigit():
        return int(w)
    w = w.removesuffix(" of").strip()
    return _NUMBERS.get(w, 1)


def _month_span(y: int, m: int) -> Window:
    start = date(y, m, 1)
    nxt = date(y + (m == 12), m % 12 + 1, 1)
    return start, nxt - timedelta(days=1)


def time_window(text: str, ref: date) -> Window | None:
    """The days a question's time words point at, relative to `ref`; None when it names no time.

    The first expression found wins, in this order: "N units ago", "last/this week|month|year|
    <weekday>", a day word ("yesterday"), "in <month> [year]", "in <year>", then any explicit date
    ("May 7, 2023", "2023-05-07") the event-date parser reads."""
    m = _AGO.search(text)
    if m:
        n = _count(m.group("n"))
        unit = m.group("unit").lower()
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * n
        # Fuzzy amounts ("a couple", "a few") and longer units get wider margins.
        slack = max(1, days // 3) if unit == "day" else max(3, days // 4)
        if not m.group("n").strip().isdigit() and unit == "day":
            slack = max(slack, 2)
        mid = ref - timedelta(days=days)
        return mid - timedelta(days=slack), min(ref, mid + timedelta(days=slack))
    m = _LAST.search(text)
    if m:
        which, unit = m.group("which").lower(), m.group("unit").lower()
        this = which == "this"
        if unit in ("week", "weekend"):
            monday = ref - timedelta(days=ref.weekday())
            if this:
                return monday - timedelta(days=1), ref
            start = monday - timedelta(days=7)
            if unit == "weekend":
                return start + timedelta(days=4), start + timedelta(days=7)
            return start - timedelta(days=1), min(ref, start + timedelta(days=7))
        if unit == "month":
            if this:
                return date(ref.year, ref.month, 1), ref
            y, mo = (ref.year - 1, 12) if ref.month == 1 else (ref.year, ref.month - 1)
            return _month_span(y, mo)
        if unit == "year":
            if this:
                return date(ref.year, 1, 1), ref
            return date(ref.year - 1, 1, 1), date(ref.year - 1, 12, 31)
        back = (ref.weekday() - _WEEKDAYS.index(unit)) % 7 or 7  # the most recent such day before ref
        day = ref - timedelta(days=back)
        return day - timedelta(days=1), day + timedelta(days=1)
    m = _DAYWORD.search(text)
    if m:
        w = m.group("w").lower()
        if w in ("today", "tonight", "this morning"):
            return ref, ref
        if w == "yesterday":
            day = ref - timedelta(days=1)
            return day - timedelta(days=1), day
        if w == "the other day":
            return ref - timedelta(days=6), ref - timedelta(days=1)
        return ref - timedelta(days=30), ref  # recently, lately
    m = _IN_MONTH.search(text)
    if m:
        mo = _MONTHS[m.group("mon")[:3].lower()]
        y = int(m.group("y")) if m.group("y") else (ref.year if mo <= ref.month else ref.year - 1)
        return _month_span(y, mo)
    m = _IN_YEAR.search(text)
    if m:
        y = int(m.group("y"))
        return date(y, 1, 1), date(y, 12, 31)
    return find_dates(text, None)
