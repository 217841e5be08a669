"""Time words in a question ("yesterday", "a couple of days ago", "last week", "in May", "in 2023")
as a window of days around a reference day (the as-of point, or today).

Recall uses the window softly: chunks dated inside it are boosted, nothing is filtered out (only
`--during` filters). So a window errs on the wide side: "a couple of days ago" is 1-4 days back,
"last week" the calendar week before this one plus a day either side. A pure function of the text
and the reference day; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from gitmem.parse.dates import _MONTHS, find_dates
from gitmem.lazyre import lazy

Window = tuple[date, date]  # first and last day, inclusive
# Seasons, fixed-day holidays and dates without a year (`_season`, `_holiday`, `_day_of`): off, a
# question with them names no window, as before wave 19 (bench/variants.py's baseline).
MORE_FORMS = True

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
# A season, read as its months (fixed ranges: a memory does not say which hemisphere it lives in).
# It needs a word that makes it a time ("in the summer", "last winter", "summer of 2023"): "fall"
# alone is a verb. "next summer" names no past window and is not read.
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}
# A topic is no time ("What aspect of autumn ..."), nor a name it begins ("the Spring Fling Market":
# `_NAMED`).
_SEASON = lazy(r"\b(?:(?P<which>in|during|over|this|last|past)\s+(?:the\s+)?(?:early\s+|late\s+)?"
               r"(?P<s>spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?(?P<y>(?:19|20)\d{2}))?"
               r"|(?P<s2>spring|summer|autumn|winter)\s+(?:of\s+)?(?P<y2>(?:19|20)\d{2}))\b", re.I)
_NAMED = lazy(r"[A-Z]\w*\s+[A-Z]")
# The words one of the forms above needs (a date needs a digit): a question with none of them skips
# their patterns (~40 us a question at 1M lines' recall, where most questions name no time).
_MORE_HINTS = ("spring", "summer", "autumn", "fall", "winter", "christmas", "xmas", "new year", "halloween",
               "valentine", "holidays")
# A holiday on a fixed day, with the days around it that "over Christmas" means.
_HOLIDAYS = {"christmas": ((12, 24), (12, 26)), "xmas": ((12, 24), (12, 26)), "new year": ((12, 31), (1, 1)),
             "halloween": ((10, 31), (10, 31)), "valentine": ((2, 14), (2, 14)), "holidays": ((12, 20), (1, 2))}
_HOLIDAY = lazy(r"\b(?:(?P<which>on|over|at|for|during|around|this|last|past)\s+(?:the\s+)?)?(?P<h>christmas|xmas|new\s+year|"
                r"halloween|valentine)(?:'?s)?(?:\s+(?:eve|day))?(?:\s+(?P<y>(?:19|20)\d{2}))?\b"
                r"|\b(?:over|during)\s+the\s+(?P<h2>holidays)\b", re.I)
# "the 3rd of November" as the date parser reads it ("3rd November").
_ORDINAL_OF = lazy(r"\b([0-3]?\d)(?:st|nd|rd|th)\s+of\s+(?=[a-z])", re.I)
# "on the 3rd": a day of the month, no month named.
_ON_THE = lazy(r"\bon\s+the\s+(?P<d>[0-3]?\d)(?:st|nd|rd|th)\b(?!\s+of\b)", re.I)

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
    ("May 7, 2023", "2023-05-07") the event-date parser reads.

    With MORE_FORMS, before the year: a season ("in the summer", "last winter"); after it, a
    fixed-day holiday ("over Christmas"), and a date without a year ("on 3 Nov", "on the 3rd"):
    each the latest one on or before `ref`."""
    low = text.lower()
    more = MORE_FORMS and (any(ch.isdigit() for ch in text) or any(w in low for w in _MORE_HINTS))
    if more:
        text = _ORDINAL_OF.sub(r"\1 ", text)
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
    m = next((m for m in _SEASON.finditer(text) if not _NAMED.match(text, m.start("s" if m.group("s") else "s2"))),
             None) if more else None
    if m:
        return _season(m, ref)
    m = _IN_YEAR.search(text)
    if m:
        y = int(m.group("y"))
        return date(y, 1, 1), date(y, 12, 31)
    if not more:
        return find_dates(text, None)
    m = _HOLIDAY.search(text)
    if m:
        return _holiday(m, ref)
    return _day_of(text, ref)


def _latest(span: Callable[[int], Window], ref: date, ended: bool = False) -> Window:
    """The latest of a yearly span (`span(year)`) that starts on or before `ref` (with `ended`: that
    ends before it), as a memory asked about it looks back."""
    y = ref.year + 1
    while span(y)[0] > ref or ended and span(y)[1] >= ref:
        y -= 1
    return span(y)


def _season(m: re.Match[str], ref: date) -> Window:
    """A season's months: of the year written (a winter is the one that ends in it), else the
    latest that began by `ref` ("last summer": the latest that is over)."""
    first, last = _SEASONS[(m.group("s") or m.group("s2")).lower()]

    def span(y: int) -> Window:
        start_y = y - 1 if first > last else y
        return date(start_y, first, 1), _month_span(y, last)[1]

    y = m.group("y") or m.group("y2")
    if y:
        return span(int(y))
    return _latest(span, ref, ended=(m.group("which") or "").lower() in ("last", "past"))


def _holiday(m: re.Match[str], ref: date) -> Window:
    """A fixed-day holiday's days: the year written, else the latest that began by `ref`."""
    (m1, d1), (m2, d2) = _HOLIDAYS[" ".join((m.group("h") or m.group("h2")).lower().split())]

    def span(y: int) -> Window:
        return date(y - 1 if (m1, d1) > (m2, d2) else y, m1, d1), date(y, m2, d2)

    if m.group("y"):
        return span(int(m.group("y")))
    return _latest(span, ref, ended=(m.group("which") or "").lower() in ("last", "past"))


def _day_of(text: str, ref: date) -> Window | None:
    """An explicit date or range; one written without a year ("on 3 Nov", "on the 3rd of November")
    is the latest such day on or before `ref`, and "on the 3rd" the latest 3rd of a month."""
    found = find_dates(text, None)
    if found is not None:
        return found
    found = find_dates(text, ref)
    if found is not None:
        if found[0] > ref:  # a day later this year has not come yet: last year's
            found = find_dates(text, date(ref.year - 1, 1, 1))
        return found
    m = _ON_THE.search(text)
    if m is None or not 1 <= int(m.group("d")) <= 31:
        return None
    y, mo = ref.year, ref.month
    for _ in range(13):  # the latest month with that day, on or before ref
        try:
            day = date(y, mo, int(m.group("d")))
        except ValueError:
            day = None
        if day is not None and day <= ref:
            return day, day
        y, mo = (y - 1, 12) if mo == 1 else (y, mo - 1)
    return None
