"""Time words in a question become a window of days around the day asked (gitmem/parse/timewords.py)."""

from __future__ import annotations

from datetime import date

import pytest

from gitmem.parse.timewords import anchored, time_window

REF = date(2023, 5, 24)  # a Wednesday


@pytest.mark.parametrize("question, lo, hi", [
    ("What did I buy yesterday?", date(2023, 5, 22), date(2023, 5, 23)),
    ("What did I cook a couple of days ago?", date(2023, 5, 20), date(2023, 5, 24)),
    ("Where did I go 10 days ago?", date(2023, 5, 11), date(2023, 5, 17)),
    ("Which book did I finish last week?", date(2023, 5, 14), date(2023, 5, 22)),
    ("What did I do last Saturday?", date(2023, 5, 19), date(2023, 5, 21)),
    ("What happened last month?", date(2023, 4, 1), date(2023, 4, 30)),
    ("Which concerts did I see in March?", date(2023, 3, 1), date(2023, 3, 31)),
    ("What did I plan in August?", date(2022, 8, 1), date(2022, 8, 31)),  # August of last year
    ("What did I plan in August 2023?", date(2023, 8, 1), date(2023, 8, 31)),
    ("Which trips did I take in 2021?", date(2021, 1, 1), date(2021, 12, 31)),
    ("What did I do on May 7, 2023?", date(2023, 5, 7), date(2023, 5, 7)),
    # Wave 19: seasons (fixed months), dates without a year, "on the Nth", fixed-day holidays:
    # each the latest one that began by the day asked.
    ("What did we do in the summer?", date(2022, 6, 1), date(2022, 8, 31)),  # summer 2023 has not begun
    ("What did I read this spring?", date(2023, 3, 1), date(2023, 5, 31)),
    ("Where did we ski last winter?", date(2022, 12, 1), date(2023, 2, 28)),
    ("What did I bake in the fall?", date(2022, 9, 1), date(2022, 11, 30)),
    ("Where did I go in the summer of 2021?", date(2021, 6, 1), date(2021, 8, 31)),
    ("What did I do on 3 Nov?", date(2022, 11, 3), date(2022, 11, 3)),  # the latest Nov 3 before May 24
    ("What did I do on May 3rd?", date(2023, 5, 3), date(2023, 5, 3)),
    ("What did I do on the 3rd of May?", date(2023, 5, 3), date(2023, 5, 3)),
    ("What did I buy on the 30th?", date(2023, 4, 30), date(2023, 4, 30)),
    ("What did I get over Christmas?", date(2022, 12, 24), date(2022, 12, 26)),
    ("What did I do last weekend?", date(2023, 5, 19), date(2023, 5, 22)),
    ("What did I learn earlier this year?", date(2023, 1, 1), date(2023, 5, 24)),
])
def test_time_words_name_a_window(question: str, lo: date, hi: date) -> None:
    assert time_window(question, REF) == (lo, hi)


@pytest.mark.parametrize("question", [
    "What is my favourite colour?",
    "May I ask what Caroline painted?",  # "May" as a verb names no month
    "How many weeks did the course last?",  # "last" as a verb
    "Did my grandmother fall again?",  # "fall" as a verb
    "What will I do next summer?",  # a summer to come names no past window
])
def test_no_time_words_no_window(question: str) -> None:
    assert time_window(question, REF) is None


@pytest.mark.parametrize("text, placed", [
    ("Caroline: I went to a LGBTQ support group yesterday and it was so powerful.", True),
    ("Melanie: We went camping two weekends ago with the kids.", True),
    ("Nate: I won a really big video game tournament last week!", True),
    ("Jon: Lost my job as a banker, so I'm starting my own business in July.", True),
    ("Tim: I snapped that pic on my trip to the Smoky Mountains in 2022.", True),
    ("Caroline: Thanks, Melanie! That's really sweet.", False),
    ("Melanie: We may go swimming, who knows.", False),  # "may": the verb, not the month
    ("Gina: The lastly added weekday-ish words do not count.", False),  # whole words only
])
def test_a_text_that_places_something_in_time_is_anchored(text: str, placed: bool) -> None:
    assert anchored(text) is placed
