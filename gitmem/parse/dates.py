"""Event time: the dates written in a fact ("Nov 27–Dec 1, 2025") or the daily log's own date."""

from __future__ import annotations

import re
from functools import lru_cache
from datetime import date, timedelta

from gitmem.lazyre import lazy
from gitmem.parse.attributes import OPENING

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}


def _mon(g: str) -> str:
    return (
        rf"(?<![a-z])(?P<{g}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
        rf"|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![a-z])\.?"
    )


def _day(g: str) -> str:
    return rf"(?<!\d)(?P<{g}>[0-3]?\d)(?!\d)(?:st|nd|rd|th)?(?![a-z])"


def _year(g: str) -> str:
    return rf"(?P<{g}>\d{{4}})(?!\d)"


def _iso(p: str) -> str:
    return rf"(?<!\d)(?P<{p}y>\d{{4}})-(?P<{p}m>\d{{2}})-(?P<{p}d>\d{{2}})(?!\d)"


_SEP = r"(?:\s*(?:–|—|-|\.\.)\s*|\s+(?:to|through|thru|until|till)\s+)"
_YSEP = r"(?:,\s*|\s+)"


@lru_cache(maxsize=1)
def _date_re() -> re.Pattern[str]:
    # Compiled on first use (~11 ms): a block without digits never needs it, and neither does a
    # process that only asks for entity keys. Alternatives are tried left to right at each
    # position, so the longer forms come first: a range before a single date, a day before a month.
    return re.compile(
        "|".join(
            [
                rf"(?P<A>{_iso('a1')}{_SEP}{_iso('a2')})",
                rf"(?P<B>{_iso('b')})",
                rf"(?P<C>{_mon('cm1')}\s*{_day('cd1')}(?:{_YSEP}{_year('cy1')})?{_SEP}"
                rf"{_mon('cm2')}\s*{_day('cd2')}(?:{_YSEP}{_year('cy2')})?)",
                rf"(?P<D>{_mon('dm')}\s*{_day('dd1')}{_SEP}{_day('dd2')}(?:{_YSEP}{_year('dy')})?)",
                rf"(?P<E>{_mon('em')}\s*{_day('ed')}(?:{_YSEP}{_year('ey')})?)",
                rf"(?P<H>{_mon('hm')},?\s+{_year('hy')})",
                rf"(?P<F>{_day('fd1')}(?:\s+{_mon('fm1')})?{_SEP}{_day('fd2')}\s+{_mon('fm2')}"
                rf"(?:{_YSEP}{_year('fy')})?)",
                rf"(?P<G>{_day('gd')}\s+{_mon('gm')}(?:{_YSEP}{_year('gy')})?)",
            ]
        ),
        re.IGNORECASE,
    )


# Every form contains a digit run, and a month-first form has its month name just before its first
# digit run. Trying the big pattern only at those anchors (instead of at every character) is what
# makes a typical block cost a few microseconds rather than ~170 us.
_DIGITS = lazy(r"\d+")
_SUFFIXES = frozenset(("st", "nd", "rd", "th"))
_RANGE_CHARS = frozenset("–—-.")
_RANGE_WORDS = frozenset(("to", "th", "un", "ti"))  # to, through/thru, until, till


def _month_start(text: str, lo: int, p: int) -> int:
    """Start of a month name ending just before offset p ("Nov 27", "Sept. 3"), or -1."""
    j = p
    while j > lo and text[j - 1] in " \t\u00a0":
        j -= 1
    if j > lo and text[j - 1] == ".":
        j -= 1
    k = j
    while k > lo and j - k < 10 and text[k - 1].isalpha():
        k -= 1
    if 3 <= j - k <= 9 and text[k : k + 3].lower() in _MONTHS and not (k > 0 and text[k - 1].isalpha()):
        return k
    return -1


def _may_start_date(text: str, run: re.Match[str]) -> bool:
    """Can a date start at this digit run: an ISO year, or a day followed by a month or a range?"""
    end = run.end()
    n = end - run.start()
    if n == 4:
        return text.startswith("-", end)
    if n > 2:
        return False
    q = end
    if text[q : q + 2].lower() in _SUFFIXES:
        q += 2
    while q < len(text) and text[q] in " \t\u00a0":
        q += 1
    nxt = text[q : q + 3].lower()
    return nxt in _MONTHS or nxt[:1] in _RANGE_CHARS or nxt[:2] in _RANGE_WORDS


def _mkdate(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _month(token: str | None) -> int | None:
    if token is None:
        return None
    return _MONTHS[token[:3].lower()]


def _yint(s: str | None) -> int | None:
    return int(s) if s else None


def _month_end(y: int, m: int) -> date:
    return (date(y + (m == 12), m % 12 + 1, 1)) - timedelta(days=1)


def _span(
    m1: int, d1: int, y1: int | None, m2: int, d2: int, y2: int | None, default: date | None
) -> tuple[date, date] | None:
    """A range whose years may be missing: fill them from each other, else from the log's year."""
    wraps = m1 > m2  # "Dec 30 – Jan 2, 2026" crosses a new year; "Nov 30-27" is just invalid
    if y1 is None and y2 is None:
        if default is None:
            return None
        y1 = default.year
        y2 = y1 + wraps
    elif y1 is None:
        assert y2 is not None
        y1 = y2 - wraps
    elif y2 is None:
        y2 = y1 + wraps
    start, end = _mkdate(y1, m1, d1), _mkdate(y2, m2, d2)
    if start is None or end is None or end < start:
        return None
    return start, end


def _resolve(m: re.Match[str], default: date | None) -> tuple[date, date] | None:
    g = m.group
    if g("A"):
        s = _mkdate(int(g("a1y")), int(g("a1m")), int(g("a1d")))
        e = _mkdate(int(g("a2y")), int(g("a2m")), int(g("a2d")))
        return (s, e) if s and e and s <= e else None
    if g("B"):
        s = _mkdate(int(g("by")), int(g("bm")), int(g("bd")))
        return (s, s) if s else None
    if g("C"):
        return _span(
            _month(g("cm1")) or 0, int(g("cd1")), _yint(g("cy1")),
            _month(g("cm2")) or 0, int(g("cd2")), _yint(g("cy2")), default,
        )
    if g("D"):
        mon = _month(g("dm")) or 0
        return _span(mon, int(g("dd1")), _yint(g("dy")), mon, int(g("dd2")), None, default)
    if g("E"):
        if g("em") == "may" and not g("ey"):
            return None  # "you may 2x it" is the verb, not the month
        y = _yint(g("ey")) or (default.year if default else None)
        s = _mkdate(y, _month(g("em")) or 0, int(g("ed"))) if y else None
        return (s, s) if s else None
    if g("H"):
        y, mon = int(g("hy")), _month(g("hm")) or 0
        if y < 1:
            return None
        return date(y, mon, 1), _month_end(y, mon)
    if g("F"):
        m2 = _month(g("fm2")) or 0
        m1 = _month(g("fm1")) or m2
        return _span(m1, int(g("fd1")), None, m2, int(g("fd2")), _yint(g("fy")), default)
    if g("G"):
        y = _yint(g("gy")) or (default.year if default else None)
        s = _mkdate(y, _month(g("gm")) or 0, int(g("gd"))) if y else None
        return (s, s) if s else None
    return None


# Event time comes from the first date in a block; looking further into a pasted megabyte-long
# paragraph costs seconds and finds nothing a reader would take as "when this happened".
SCAN_LIMIT = 4096


def find_dates(text: str, default: date | None = None) -> tuple[date, date] | None:
    """The first valid date or range in the first 4 KiB of `text` (year-less forms take `default`'s year)."""
    found = _first_date(text, default)
    return found[1] if found is not None else None


# Any leap year: a year-less "Feb 29" is still a date when only where it is written matters.
_ANY_YEAR = date(2000, 1, 1)


def event_window_at(text: str) -> tuple[int, int] | None:
    """Where in `text` (start, end offsets) the date or range that `find_dates` reads as its event
    time is written, whatever year it falls in; None when it writes none. What holds in that window
    is the statement's value; the window's own numbers are when, not what (recall/currency.py)."""
    found = _first_date(text, _ANY_YEAR)
    return found[0].span() if found is not None else None


def _first_date(text: str, default: date | None) -> tuple[re.Match[str], tuple[date, date]] | None:
    if len(text) > SCAN_LIMIT:
        text = text[:SCAN_LIMIT]
    done = 0  # text before this offset was part of an earlier (invalid) match
    for d in _DIGITS.finditer(text):
        p = d.start()
        if p < done:
            continue
        mon = _month_start(text, done, p)
        starts = [mon] if mon >= 0 else []
        if _may_start_date(text, d):
            starts.append(p)
        for start in starts:
            m = _date_re().match(text, start)
            if m is None:
                continue
            try:
                span = _resolve(m, default)
            except (ValueError, OverflowError):  # year 0, or 9999 + 1 on a wrapping range
                span = None
            if span is not None:
                return m, span
            done = m.end()
            break
    return None


def parse_event_time(text: str, default: date | None) -> tuple[str | None, str | None]:
    """(start, end) ISO dates of what `text` is about; else the default's date twice; else (None, None).

    Forms: 2025-11-30; 2025-11-27..2025-12-01 (also –, -, "to"); Nov 27–Dec 1, 2025; Nov 27-30, 2025;
    27 Nov 2025; 27–30 Nov 2025; November 2025 / Dec 2025 (the whole month); year-less "Nov 27"
    takes `default`'s year. Invalid dates (Feb 30) are skipped, never raised.
    """
    span = find_dates(text, default)
    if span is not None:
        return span[0].isoformat(), span[1].isoformat()
    if default is not None:
        iso = default.isoformat()
        return iso, iso
    return None, None


# An open-ended state with an end and no start: "On sabbatical through May", "away until the 14th",
# "Borrowing his sister's Fiat until the body shop finishes his car, around 6 March". The end is the
# first date after the word, in the same clause, within a few words of it.
_UNTIL_WORDS = r"until|till|til|through|thru|up to"
_UNTIL = lazy(r"\b(?P<word>" + _UNTIL_WORDS + r")\b(?P<rest>[^.;!?]{0,60})", re.I)
# "At her cousin's wedding in Accra; back on Monday": a clause of its own saying when someone is back
# ends the stay before it ("back in June", "back mid-September" too). Not "Came back on Monday from
# Lisbon" (a report of the return).
_BACK = lazy(r"(?:^|[;,(]\s*)back\s+(?:on\b|by\b|in\b|around\b|(?=mid\b|mid-|early\s|late\s))(?P<rest>[^.;!?]{0,60})", re.I)
_BARE_MONTH = lazy(r"^\s*(?:(?:the\s+)?(?:end|middle|beginning|start|(?:first|second|third|last|final)\s+(?:week|fortnight|half))\s+of\s+|"
                   r"early\s+|late\s+|mid-?\s*)?"
                         + _mon("bm") + r"(?!\s*\d)", re.I)
# "until the lease ends in June", "till the course finishes by May": the month the clause after the
# until-word names, the end of that month (a day-less month is read no other way: find_dates needs a day).
_CLAUSE_MONTH = lazy(r"^[^,;:()]{0,40}?\b(?:in|by|at)\s+(?:(?:the\s+)?(?:end|middle|beginning|start)\s+of\s+|early\s+|late\s+|"
                     r"mid-?\s*)?" + _mon("cm") + r"(?!\s*\d)", re.I)
_ORDINAL = lazy(r"^\s*the\s+(?P<od>[0-3]?\d)(?:st|nd|rd|th)\b", re.I)


_WEEKDAYS = ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")
_WEEKDAY = lazy(r"^\s*(?:next\s+|this\s+)?(?P<wd>" + "|".join(_WEEKDAYS) + r")day\b", re.I)
_WEEK_AFTER = lazy(r"\s+week\b", re.I)
_NEXT = lazy(r"^\s*(?:the\s+end\s+of\s+)?(?:next\s+(?P<unit>week|month)|the\s+(?P<weekend>weekend))\b", re.I)
# "For two weeks", "for the next three days": a stay counted from the day it was written. Not when
# the statement counts how long something has lasted ("Has lived there for ten years", "vegan for
# two months now") or dates itself ("a trip to Japan for two weeks in April").
# "For the three weeks he is in Japan", "for the fortnight of the masterclasses": the same while, told
# with an article (no count: one of the unit).
_FOR = lazy(r"\b(?:for|about|around|roughly)\s+(?:(?:the\s+next\s+|another\s+|the\s+)?(?P<n>a|an|one|two|three|four|five|six|seven|"
            r"eight|nine|ten|a\s+couple\s+of|a\s+few|\d{1,2})\s+|the\s+)(?P<unit>day|night|week|fortnight|month|year)s?\b", re.I)
# "a month" after "for" is the while ("for a month"), elsewhere a rate ("twice a month"); "next" after
# "the" counts the while from the day written ("for the next ten days"), alone it dates ("next month");
# a year written dates it too ("Moved to Lisbon in 2016 for a year").
_LASTED = lazy(r"\b(?:(?:has|have|had)\s+(?:been|had|\w+ed)|been|since|already|ago|now|every|each|per|(?:19|20)\d\d|"
                     r"(?<!for )a (?:day|week|month|year)|old|"
                     r"long|so far|(?<!the )next|later|"
                     r"january|february|march|april|may|june|july|august|september|october|november|december|"
                     r"(?:" + "|".join(_WEEKDAYS) + r")day|weekend|summer|winter|spring|autumn|easter|christmas)\b",
                     re.I)
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10}
_UNIT_DAYS = {"day": 1, "night": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}


# ("Has a hire car ... around three weeks" holds for three weeks; "Has lived there for ten years" counts.)
# Every end `ends` reads starts with one of these words (_UNTIL's and _FOR's): a necessary
# condition, cheap to test first on the many lines that name no end.
# Factored by first letters: recall tests it on every candidate, and an alternation of whole words
# costs ~40% more per text (measured on the 1M-line history's texts).
ENDS_HINT = lazy(r"\b(?:t(?:ill?|hr(?:ough|u)|his week)|until|up to|for|(?:a(?:bout|round)|roughly)\s+"
                       r"(?:an?|one|t(?:wo|hree|en)|f(?:our|ive)|s(?:ix|even)|eight|nine|\d{1,2}))\b", re.I)


# A piece of text every ENDS_HINT match holds, lowercased, is one of "til", "thr", "this week",
# "up to", "for", "about", "around", "roughly" (may_end tests them one by one: a generator over a
# tuple of them cost more than the tests). The pattern starts with a word boundary, so the regex
# engine tries it at every position of a text (~16k instructions for a 70-character line, ~2% of a
# CLI recall: may_end reads every head candidate); without one of the pieces an ASCII text cannot
# match (in ASCII, re.I folds only the ASCII letters lower() folds), so it is skipped.


def may_end(text: str) -> bool:
    """A cheap necessary condition of `ends` naming an end: ENDS_HINT, or "back on / back by" (a
    substring test: a branch for it in the hint cost ~10% more per text, on every candidate)."""
    if "ack " in text or "ver the" in text or "uring" in text or "only" in text or "this " in text:
        return True  # back, Back; over the / Over the holidays; during; July only; this month
    if text.isascii():
        low = text.lower()
        if not ("til" in low or "thr" in low or "this week" in low or "up to" in low or "for" in low
                or "about" in low or "around" in low or "roughly" in low):
            return False
    return ENDS_HINT.search(text) is not None


# A while that ends when something else happens, no date named: "Staying with his parents until the
# renovation is done", "At her sister's while the builders redo her kitchen". The clause after the
# word is what ends it (recall/currency.py: a later line of the same person that reports that thing
# goes ahead of the stay). "While" is a while only after a progressive opening ("Staying ... while",
# "Covering ... while"): "Works in Leeds while her husband works in York" contrasts two states.
_END_CLAUSE = lazy(r"\b(?P<word>until|till|while|whilst)\s+(?P<rest>[^.;:!?,()]{3,80})", re.I)
_PROGRESSIVE = lazy(OPENING + r"(?:also\s+|still\s+)?[A-Za-z]+ing\b")


def end_condition(text: str) -> str:
    """The clause saying what ends a state that holds for a while (`_END_CLAUSE`), when that clause
    names no date (`ends` reads those: "until the end of June" is a day, not an event); "" if none."""
    low = text[:SCAN_LIMIT].lower()
    if "til" not in low and "whil" not in low:
        return ""
    for m in _END_CLAUSE.finditer(text[:SCAN_LIMIT]):
        if m.group("word").lower().startswith("whil") and _PROGRESSIVE.match(text) is None:
            continue
        if ends(m.group(0), _ANY_DAY) is None and find_dates(m.group("rest"), None) is None:
            return m.group("rest")
    return ""


_ANY_DAY = date(2000, 1, 1)  # `end_condition` asks only whether a clause names a day, not which


# A state for the week it was written in: "Using his brother-in-law's van this week", "at the coast
# for the weekend". It is over after that week's Sunday.
_THIS_WEEK = lazy(r"\b(?:this|for the|over the)\s+(?:week|weekend)\b(?!\s+(?:before|after)\b)", re.I)
_A_WHILE = ("for ", "about ", "around ", "roughly ")


@lru_cache(maxsize=4096)
def ends(text: str, written: date) -> date | None:
    """The last day of a state the text says holds until a date ("through May" -> the end of May,
    "until the 14th" -> the next 14th, "until 12 March 2026", "till Friday", "until next week")
    or for a while from when it was written ("for two weeks"), reading a year-less date from
    `written` (the day it was written: a month or day before it is next year's / next month's).
    None when the text names no such end."""
    low = text[:SCAN_LIMIT].lower()
    if "back " in low and (m := _BACK.search(text[:SCAN_LIMIT])) is not None:
        last = _end_of(m.group("rest"), written)
        if last is not None:
            return last
    if "unti" not in low and "thr" not in low and "til" not in low and "up to" not in low:
        return _a_while(low, written)
    at = 0
    while (m := _UNTIL.search(text, at, SCAN_LIMIT)) is not None:
        at, rest = m.end(), m.group("rest")
        if m.group("word").lower() == "up to" and _an_amount(rest, written):
            # "putting the rent up to NZ$585 a week from 1 March": a value raised to, not an end; an
            # until-word after it is read on its own ("up to six hives, until March").
            at = m.start("rest")
            continue
        last = _end_of(rest, written)
        if last is None:
            # "until the Easter break", "till the end of the month", "through the spring semester".
            last = period_end(rest, written, to_its_start=m.group("word").lower() not in ("through", "thru"))
        if last is not None:
            return last
    return _a_while(low, written)


# "up to" before an amount is how high, not how long: a number or a currency that no date opens
# ("up to 910", "up to NZ$585 a week from 1 March", "up to six hives"), or a date written later on.
_AMOUNT = lazy(r"^\s*(?:[A-Z]{0,3}[$€£¥₹]|\d|(?:two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|"
               r"a\s+(?:few|dozen|hundred|thousand))\b)", re.I)


def _an_amount(rest: str, written: date) -> bool:
    """Whether the words after "up to" open with an amount rather than a date."""
    if _AMOUNT.match(rest) is None:
        return False
    found = _first_date(rest, written)
    return found is None or bool(rest[:found[0].start()].strip())


def _end_of(rest: str, written: date) -> date | None:
    """The date that opens `rest` (the words after an until-word), read from `written`."""
    span = find_dates(rest, written)
    if span is not None:
        end = span[1]
        if end < written and not re.search(r"\d{4}", rest):
            end = _mkdate(end.year + 1, end.month, end.day) or end  # "until 6 March" written in December
        return end
    wd = _WEEKDAY.match(rest)
    if wd is not None:
        ahead = (_WEEKDAYS.index(wd.group("wd").lower()) - written.weekday() - 1) % 7 + 1
        # "till Friday week": the Friday a week after the coming one.
        return written + timedelta(days=ahead + 7 * bool(_WEEK_AFTER.match(rest, wd.end())))
    nxt = _NEXT.match(rest)
    if nxt is not None:
        if nxt.group("unit") and nxt.group("unit").lower() == "month":
            y, mo = written.year + (written.month == 12), written.month % 12 + 1
            return _month_end(y, mo)
        sunday = written + timedelta(days=6 - written.weekday())
        return sunday if nxt.group("weekend") else sunday + timedelta(days=7)
    bare = _BARE_MONTH.match(rest)
    if bare is not None:
        mon = _MONTHS[bare.group("bm")[:3].lower()]
        return _month_end(written.year + (mon < written.month), mon)
    day = _ORDINAL.match(rest)
    if day is not None:
        d = int(day.group("od"))
        y, mo = (written.year, written.month) if d >= written.day else \
            (written.year + (written.month == 12), written.month % 12 + 1)
        return _mkdate(y, mo, d)
    clause = _CLAUSE_MONTH.match(rest)
    if clause is not None:
        mon = _MONTHS[clause.group("cm")[:3].lower()]
        return _month_end(written.year + (mon < written.month), mon)
    return None


def _a_while(low: str, written: date) -> date | None:
    """The end of a state that holds for a while from when it was written, naming no date: "for two
    weeks", "about two weeks" (a duration counted from `written`), "this week" (its Sunday), "for the
    spring semester", "over the holidays" (a named period: `period_end`)."""
    if "week" in low and _THIS_WEEK.search(low) is not None and not _LASTED.search(low.replace("weekend", "")):
        return written + timedelta(days=6 - written.weekday())
    last = _for_a_while(low, written) if any(w in low for w in _A_WHILE) else None
    period = any(w in low for w in _FOR_PERIOD_HINTS)
    if last is None and period:
        last = _for_a_period(low, written)
    if last is None and ("only" in low or period):
        last = _a_month(low, written)
    if last is None and "this " in low:
        last = _this_period(low, written)
    return last


# -- named periods ---------------------------------------------------------------------------------
# A state can end with a period the calendar names rather than a date: "till the end of the month",
# "until the Easter break", "for the spring semester", "over the holidays". Each period is read
# from the day the line was written: its next occurrence that has not ended by then. Seasons are
# the northern meteorological ones; a semester or term its usual span (`_SPANS`), ending late
# rather than early: a state read as over while it still holds hides a true answer.
_SEASONS = "spring|summer|autumn|fall|winter"
_BREAK = r"(?P<brk>\s+(?:break|holidays?|hols|vacation|recess|closure))?"
_PERIOD = lazy(
    r"^\s*(?:the\s+|this\s+|next\s+)?(?:(?P<end>end\s+of\s+(?:the\s+|this\s+)?)|(?:rest\s+of\s+(?:the\s+)?))?(?:"
    r"(?P<unit>month|year|week)\b|"
    r"(?P<study>(?:(?P<half>" + _SEASONS + r")\s+)?(?:semester|term)|(?:school|academic)\s+year)\b|"
    r"(?P<feast>christmas|xmas|easter|new\s+year|ramadan)(?:'s)?" + _BREAK + r"\b|"
    r"whole\s+of\s+" + _mon("month") + r"(?!\s*\d)|"
    r"(?P<season>" + _SEASONS + r")(?:\s+(?:break|holidays?|hols|vacation))?\b(?!\s+(?:of|in)\s+\d)|"
    r"(?P<holidays>holidays|hols)\b)", re.I)
# A state "for the spring semester", "over Christmas", "during the summer holidays": over at the
# period's end. Not a count of how long or how often ("every summer", "for the third year").
_FOR_PERIOD = lazy(r"\b(?:for|over|during|throughout)\s+(?P<rest>(?:the|this|next)\s+[^.;!?]{0,40}|"
                   r"(?:christmas|xmas|easter|new\s+year|ramadan|" + _SEASONS + r")\b[^.;!?]{0,30})", re.I)
_FOR_PERIOD_HINTS = ("for ", "over ", "during ", "throughout ")
_RECURS = lazy(r"\b(?:every|each|since|ago|already|usually|always|(?:has|have|had)\s+(?:been|\w+ed))\b", re.I)
# (first month, first day, last month, last day) of a named span; a last month before the first
# wraps into the next year.
_SPANS: dict[str, tuple[int, int, int, int]] = {
    "spring": (3, 1, 5, 31), "summer": (6, 1, 8, 31), "autumn": (9, 1, 11, 30), "fall": (9, 1, 11, 30),
    "winter": (12, 1, 2, 28),
    "spring semester": (1, 15, 6, 30), "summer semester": (4, 1, 7, 31), "autumn semester": (9, 1, 12, 31),
    "fall semester": (9, 1, 12, 31), "winter semester": (10, 1, 3, 31),
    "school year": (9, 1, 7, 31),
    "christmas": (12, 25, 12, 26), "christmas break": (12, 20, 1, 6), "new year": (1, 1, 1, 1),
    "summer break": (7, 1, 8, 31),
}


def easter(year: int) -> date:
    """Easter Sunday of a Gregorian year (the anonymous Gregorian computus, Meeus/Jones/Butcher)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    l = (32 + 2 * e + 2 * i - h - k) % 7  # noqa: E741 (the algorithm's own name)
    m = (a + 11 * h + 22 * l) // 451
    month, day = divmod(h + l - 7 * m + 114, 31)
    return date(year, month, day + 1)


# The tabular Islamic calendar (30-year cycle, civil epoch): within a day of the announced dates.
_HIJRI_EPOCH = 1948440  # Julian day number of 1 Muharram, year 1
_JDN_ORDINAL = 1721425  # Julian day number minus date.toordinal()


def ramadan(year: int) -> tuple[date, date]:
    """The first day of Ramadan of the Hijri `year` and the first day after it (Eid al-Fitr): a
    timetable "during Ramadan" holds through Eid's day (late rather than early, as `_SPANS`)."""
    first = _HIJRI_EPOCH + (year - 1) * 354 + (3 + 11 * year) // 30 + 236  # months 1-8: 236 days
    start = date.fromordinal(first - _JDN_ORDINAL)
    return start, start + timedelta(days=30)


def _ramadan_after(written: date) -> tuple[date, date] | None:
    """The Ramadan that has not ended by `written` (this one or the next)."""
    hijri = (written.year - 622) * 33 // 32
    for year in range(hijri - 1, hijri + 3):
        span = ramadan(year)
        if span[1] >= written:
            return span
    return None


def _period_span(key: str, year: int) -> tuple[date, date]:
    m1, d1, m2, d2 = _SPANS[key]
    return date(year, m1, d1), _mkdate(year + (m2 < m1), m2, d2) or _month_end(year + (m2 < m1), m2)


def _named(m: re.Match[str], written: date) -> tuple[date, date] | None:
    """The next occurrence of the period `_PERIOD` matched that has not ended by `written`."""
    unit = (m.group("unit") or "").lower()
    if unit:
        if not m.group("end") and "rest of" not in m.group().lower():
            return None  # "until the year" says nothing; "for the month" counts (`_for_a_while`)
        if unit == "week":
            return written, written + timedelta(days=6 - written.weekday())
        if unit == "month":
            return written, _month_end(written.year, written.month)
        return written, date(written.year, 12, 31)
    key = ""
    if m.group("month"):
        # "for the whole of March": that month's next occurrence (this one while it lasts). Not a month
        # alone: "for the July weekend" names when something is, not a while it lasts.
        mon = _MONTHS[m.group("month")[:3].lower()]
        year = written.year + (mon < written.month)
        return date(year, mon, 1), _month_end(year, mon)
    if m.group("study"):
        study = " ".join(m.group("study").lower().split())
        half = (m.group("half") or "").lower()
        if study.endswith("year"):
            key = "school year"
        elif half:
            key = f"{half} semester"
        else:  # "the semester", "this term": the half-year it was written in
            return written, date(written.year, 6, 30) if written.month <= 6 else date(written.year, 12, 31)
    elif m.group("feast"):
        feast = " ".join(m.group("feast").lower().split()).replace("xmas", "christmas")
        brk = m.group("brk") is not None
        if feast == "ramadan":
            return _ramadan_after(written)
        if feast == "easter":
            # Easter Sunday; its break the fortnight around it (schools' dates vary: a wide span).
            for year in (written.year, written.year + 1):
                sunday = easter(year)
                span = (sunday - timedelta(days=9), sunday + timedelta(days=8)) if brk else (sunday, sunday + timedelta(days=1))
                if span[1] >= written:
                    return span
            return None
        key = "christmas break" if feast == "christmas" and brk else feast
    elif m.group("season"):
        season = m.group("season").lower()
        key = "summer break" if season == "summer" and m.group().lower().rstrip().endswith(
            ("break", "holiday", "holidays", "hols", "vacation")) else season
    elif m.group("holidays"):
        # "the holidays": Christmas's near the year's end, the summer's mid-year; else unsure.
        if written.month >= 10 or written.month == 1:
            key = "christmas break"
        elif 5 <= written.month <= 8:
            key = "summer break"
        else:
            return None
    if key not in _SPANS:
        return None
    for year in (written.year - 1, written.year, written.year + 1):
        span = _period_span(key, year)
        if span[1] >= written:
            return span
    return None


def period_end(rest: str, written: date, to_its_start: bool = False) -> date | None:
    """The last day of a state that lasts until the named period opening `rest` ("the end of the
    month", "the Easter break", "the spring semester"), read from `written`: with `to_its_start`
    (until / till) the day before the period begins, unless the text says "the end of" it or the
    period is already going on when written (then its end); otherwise its end."""
    m = _PERIOD.match(rest)
    if m is None:
        return None
    span = _named(m, written)
    if span is None:
        return None
    start, end = span
    if to_its_start and not m.group("end") and start > written:
        return start - timedelta(days=1)
    return end


def _dated_or_recurring(low: str, written: date) -> bool:
    """Whether a statement names a date of its own or a recurrence ("every July"): then a named
    period or month in it says when, not for how long from the day it was written."""
    return _RECURS.search(low) is not None or find_dates(low, written) is not None


def _for_a_period(low: str, written: date) -> date | None:
    """The end of a state "for the spring semester", "over the holidays", "during the Easter break"."""
    m = _FOR_PERIOD.search(low)
    if m is None or _dated_or_recurring(low, written):
        return None
    return period_end(m.group("rest"), written)


def _for_a_while(low: str, written: date) -> date | None:
    m = _FOR.search(low)
    if m is None or _LASTED.search(low) or find_dates(low, written) is not None:
        return None
    word = " ".join((m.group("n") or "one").split())
    n = 2 if word == "a couple of" else 3 if word == "a few" else _COUNTS.get(word) or int(word)
    if m.group("unit").lower() == "year" and (m.group("n") is None or n > 2):
        # "for the year" may be the calendar's or the school's; "for 31 years" counts how long a
        # state has lasted ("Signalman at Pitlochry for 31 years"): a while ahead is a year or two.
        return None
    return written + timedelta(days=n * _UNIT_DAYS[m.group("unit").lower()])


# A value for one month: "12 euros a box for July only", "July only", "only during August", "buses
# during July." (the month closing its clause). Not "in July" or "for May" alone (when, not a while:
# "the test is booked for May"),
# "for the July weekend" (a month naming another period) nor "every July" (`_RECURS`).
_A_MONTH = lazy(r"\b(?P<pre>(?:for|during|throughout)\s+|only\s+(?:for|in|during|through(?:out)?)\s+)?(?:the\s+month\s+of\s+)?"
                + _mon("am") + r"(?!\s*\d)(?P<only>\s+only\b)?", re.I)
# "Working from the Lisbon office this month", "in Oslo this semester", "at the coast this summer":
# a state for the period it was written in (the week's own reading is `_THIS_WEEK`). Not "from this
# term" (a start: `starts`).
_THIS_PERIOD = lazy(r"(?<!from )\bthis\s+(?P<rest>month|(?:(?:" + _SEASONS + r")\s+)?(?:semester|term)|" + _SEASONS + r")\b", re.I)


def _a_month(low: str, written: date) -> date | None:
    """The last day of a state for one named month (`_A_MONTH`): its next occurrence, this one while
    it lasts."""
    m = next((m for m in _A_MONTH.finditer(low) if _for_the_month(m, low)), None)
    if m is None or _dated_or_recurring(low, written):
        return None
    mon = _MONTHS[m.group("am")[:3]]
    return _month_end(written.year + (mon < written.month), mon)


def _for_the_month(m: re.Match[str], low: str) -> bool:
    """Whether a month `_A_MONTH` found is a while: "only" before or after it ("only in August", "July
    only": not "may only", the modal), or "during" / "throughout" before it closing its clause
    ("replaced by buses during July.")."""
    pre = m.group("pre") or ""
    if pre.startswith("only") or m.group("only") and (pre or m.group("am") != "may"):
        return True
    rest = low[m.end():].lstrip()
    # "for May" alone may be a date set ("Her driving test is booked for May"): a while only with "only".
    return pre.startswith(("during", "throughout")) and (not rest or rest[0] in ".;,!)")


def _this_period(low: str, written: date) -> date | None:
    """The last day of a state for the month, season or term it was written in (`_THIS_PERIOD`)."""
    m = _THIS_PERIOD.search(low)
    if m is None or _dated_or_recurring(low, written):
        return None
    if m.group("rest") == "month":
        return _month_end(written.year, written.month)
    return period_end("this " + m.group("rest"), written)


# -- changes logged before they take effect -----------------------------------------------------------
# "The landlord wants €1,620 from May", "On a four-day week from June", "starts at a practice there in
# May", "Promoted to manager, full-time from July": a change written down before the day it takes
# effect. Until then what held before still holds.
_FROM = lazy(r"\b(?:from|starting(?:\s+(?:on|in|from))?|as\s+of|effective(?:\s+from)?|with\s+effect\s+from|"
             r"begins?\s+(?:on|in)|starts?\b[^.;,:()]{0,40}?\b(?:in|on|from))\s+(?P<rest>[^.;!?]{0,40})", re.I)
_FROM_HINTS = ("from ", "start", "as of", "effective", "begin")
_FIRST_OF = lazy(r"^\s*(?:the\s+)?(?:(?:start|beginning)\s+of\s+|early\s+)?" + _mon("fm") + r"(?!\s*\d)", re.I)


@lru_cache(maxsize=4096)
def starts(text: str, written: date) -> date | None:
    """The day a change the text reports takes effect, when that is after `written` (the day it was
    written): "from May" (its first day), "from 1 June", "starting next month", "as of Monday",
    "starts at a practice there in May". None when it names no such day, or one already come."""
    low = text[:SCAN_LIMIT].lower()
    if not any(h in low for h in _FROM_HINTS):
        return None
    # Each "from" read on its own: the words after one may hold the next ("Letter from the preschool:
    # from September the fee is $1,620"), which a scan of non-overlapping matches would skip.
    text, at = text[:SCAN_LIMIT], 0
    while (m := _FROM.search(text, at)) is not None:
        first = _start_of(m.group("rest"), written)
        if first is not None and first > written:
            return first
        at = m.start("rest")
    return None


def _nearest(day: date, written: date) -> date:
    """The year-less `day` (given in `written`'s year) in the year that puts it nearest `written`:
    "from February" written in March is the February just gone, written in November the next."""
    later = _mkdate(day.year + 1, day.month, day.day) or day
    return later if (later - written) < (written - day) else day


def _start_of(rest: str, written: date) -> date | None:
    """The first day `rest` (the words after "from", "starting", ...) opens with, read from `written`."""
    month = _FIRST_OF.match(rest)
    if month is not None:
        mon = _MONTHS[month.group("fm")[:3].lower()]
        if month.group("fm").lower() == "may" and not rest.lstrip()[:1].isupper():
            return None  # "from may" is not read as the month unless written as a name
        return _nearest(date(written.year, mon, 1), written)
    # A date opening the words ("from 1 June", "starts in March 2027": a month and its year too).
    found = _first_date(rest, written) if _DIGITS.search(rest) is not None else None
    if found is not None and not rest[:found[0].start()].strip(" the").strip():
        return found[1][0] if re.search(r"\d{4}", rest) else _nearest(found[1][0], written)
    wd = _WEEKDAY.match(rest)
    if wd is not None:
        ahead = (_WEEKDAYS.index(wd.group("wd").lower()) - written.weekday() - 1) % 7 + 1
        return written + timedelta(days=ahead)
    nxt = _NEXT.match(rest)
    if nxt is not None and not rest.lstrip().lower().startswith("the end"):
        if nxt.group("unit") and nxt.group("unit").lower() == "month":
            return date(written.year + (written.month == 12), written.month % 12 + 1, 1)
        if nxt.group("unit"):
            return written + timedelta(days=7 - written.weekday())
    return None

