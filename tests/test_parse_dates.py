"""Event time: every supported date form, the log date default, and invalid dates."""

from __future__ import annotations

from datetime import date

import pytest

from gitmem.layout import log_date
from gitmem.parse import parse_event_time, parse_markdown

LOG_DAY = date(2025, 11, 27)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("on 2025-11-30 we met", ("2025-11-30", "2025-11-30")),
        ("Marrakech (Nov 27–Dec 1, 2025) trip", ("2025-11-27", "2025-12-01")),
        ("Nov 27-Dec 1, 2025", ("2025-11-27", "2025-12-01")),
        ("Nov 27 to Dec 1, 2025", ("2025-11-27", "2025-12-01")),
        ("Nov 27, 2025 – Dec 1, 2025", ("2025-11-27", "2025-12-01")),
        ("Nov 27-30, 2025", ("2025-11-27", "2025-11-30")),
        ("Nov 27–30 2025", ("2025-11-27", "2025-11-30")),
        ("27 Nov 2025", ("2025-11-27", "2025-11-27")),
        ("27th November, 2025", ("2025-11-27", "2025-11-27")),
        ("27–30 Nov 2025", ("2025-11-27", "2025-11-30")),
        ("27 Nov – 1 Dec 2025", ("2025-11-27", "2025-12-01")),
        ("November 2025 was busy", ("2025-11-01", "2025-11-30")),
        ("in Dec 2025", ("2025-12-01", "2025-12-31")),
        ("Feb 2024", ("2024-02-01", "2024-02-29")),
        ("2025-11-27..2025-12-01", ("2025-11-27", "2025-12-01")),
        ("2025-11-27 to 2025-12-01", ("2025-11-27", "2025-12-01")),
        ("2025-11-27 – 2025-12-01", ("2025-11-27", "2025-12-01")),
        ("Sept. 3rd, 2024", ("2024-09-03", "2024-09-03")),
        ("Dec 30 – Jan 2, 2026", ("2025-12-30", "2026-01-02")),
        ("first date wins: Jan 5, 2024 and 2025-01-01", ("2024-01-05", "2024-01-05")),
    ],
)
def test_dates_in_text(text: str, expected: tuple[str, str]) -> None:
    assert parse_event_time(text, LOG_DAY) == expected
    assert parse_event_time(text, None) == expected  # all of these carry their own year


@pytest.mark.parametrize(
    ("text", "with_log", "without"),
    [
        ("back on Nov 29", ("2025-11-29", "2025-11-29"), (None, None)),
        ("Nov 20–22 offsite", ("2025-11-20", "2025-11-22"), (None, None)),
        ("Dec 30 – Jan 2 holidays", ("2025-12-30", "2026-01-02"), (None, None)),
        ("3 Dec", ("2025-12-03", "2025-12-03"), (None, None)),
        ("no date here", ("2025-11-27", "2025-11-27"), (None, None)),
        ("you may 2x the timeout", ("2025-11-27", "2025-11-27"), (None, None)),
        ("version 1.2 at 10:30, 3 items", ("2025-11-27", "2025-11-27"), (None, None)),
    ],
)
def test_year_less_dates_take_the_log_year(text: str, with_log: tuple, without: tuple) -> None:
    assert parse_event_time(text, LOG_DAY) == with_log
    assert parse_event_time(text, None) == without


@pytest.mark.parametrize(
    "text",
    ["Feb 30, 2025", "2025-02-30", "2025-13-01", "Nov 31 2025", "2025-12-01..2025-11-01",
     "Nov 30-27, 2025", "0000-01-01", "Dec 0000", "Nov 99, 2025", "Dec 30, 9999 – Jan 2"],
)
def test_invalid_dates_are_ignored(text: str) -> None:
    assert parse_event_time(text, LOG_DAY) == ("2025-11-27", "2025-11-27")
    assert parse_event_time(text, None) == (None, None)


def test_an_invalid_date_does_not_hide_a_later_valid_one() -> None:
    assert parse_event_time("Feb 30, 2025 then 2025-03-01", None) == ("2025-03-01", "2025-03-01")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("memory/2025-11-27.md", date(2025, 11, 27)),
        ("./memory/2025-01-02.md", date(2025, 1, 2)),
        ("memory\\2025-01-02.md", date(2025, 1, 2)),
        ("memory/2025-02-30.md", None),
        ("memory/2025-11-27.txt", None),
        ("notes/memory/2025-11-27.md", None),
        ("memory/2025-11-27-extra.md", None),
        ("memory.md", None),
        ("bank/world.md", None),
    ],
)
def test_log_date(path: str, expected: date | None) -> None:
    assert log_date(path) == expected


def test_blocks_get_event_time_from_text_or_log() -> None:
    pf = parse_markdown("## Retain\n- W @Peter: in Lisbon Dec 2025\n- B did a thing\n", "memory/2025-11-27.md")
    assert [(b.event_start, b.event_end) for b in pf.blocks] == [
        ("2025-12-01", "2025-12-31"), ("2025-11-27", "2025-11-27"),
    ]


def test_only_the_start_of_a_huge_block_is_searched() -> None:
    assert parse_event_time("x " * 5000 + "2025-01-01", None) == (None, None)
    assert parse_event_time("x " * 1000 + "2025-01-01", None) == ("2025-01-01", "2025-01-01")


def test_the_ends_hint_admits_every_end_word_ends_reads() -> None:
    # ENDS_HINT is spelled factored by first letters (for speed), apart from the words `ends` reads:
    # it must stay a necessary condition of every one of them, or an end silently goes unread.
    from gitmem.parse import dates

    for word in dates._UNTIL_WORDS.split("|"):
        assert dates.ENDS_HINT.search(f"away {word} Friday"), word
    for lead in dates._A_WHILE:
        for n in dates._COUNTS:
            assert dates.ENDS_HINT.search(f"away {lead}{n} weeks"), (lead, n)
    assert dates.ENDS_HINT.search("away for 12 days")
    # A two-digit count after about/around/roughly (`_FOR` reads up to two digits): the hint once took one digit only.
    for lead in ("about", "around", "roughly"):
        assert dates.ENDS_HINT.search(f"away {lead} 12 days"), lead
        assert dates.ends(f"Away {lead} 12 days, back after", date(2026, 3, 1)) == date(2026, 3, 13), lead
    assert dates.ENDS_HINT.search("In Split this week for a trial")
    assert dates.may_end("At a wedding in Accra; back on Monday") and dates.may_end("Visiting, back by Friday")


def test_may_end_admits_what_the_ends_hint_does_in_any_case() -> None:
    # may_end skips the pattern for an ASCII text holding none of its pieces (_ENDS_PIECES): every
    # text the hint matches must still get through, whatever its case, and a non-ASCII text is
    # always searched (re.I folds "ſ" to "s" and the Kelvin sign to "k"; lower() does not).
    from gitmem.parse import dates

    texts = [f"away {word} Friday" for word in dates._UNTIL_WORDS.split("|")]
    texts += [f"away {lead}{n} weeks" for lead in dates._A_WHILE for n in dates._COUNTS]
    texts += [f"Away {lead} 12 days" for lead in ("about", "around", "roughly")]
    texts += ["In Split this week for a trial", "away for 12 days", "On leave thru June", "up to Friday"]
    for text in texts:
        for form in (text, text.upper(), text.title(), text.swapcase()):
            assert dates.ENDS_HINT.search(form) and dates.may_end(form), form
    for text in ("Away about ſix days", "Here thiſ week", "Away rouGhly ſeven weeks"):
        assert not text.isascii() and dates.ENDS_HINT.search(text) and dates.may_end(text), text
    for text in ("Lives in Lisbon", "Prefers tea to coffee", "Lives in Łódź", "format: forty"):
        assert not dates.may_end(text), text
