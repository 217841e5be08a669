"""Whose change a line tells, and the periods a value is bounded to (issue 13, wave 14, truth16).

A line filed under someone that reports another person's change ("Her flatmate Kerubo moved out",
"Ana's husband sold the car") gives no value of their own: it neither supersedes their line nor
answers for them. And a value said to hold for a period ("for July only", "for a month", "for the
next ten days", "this summer") is over after it. Invented sentences; real git repository, real index,
real recall (the first result about the entity, as bench/current_truth.py judges)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from test_currency_mood import _top, _workspace
from test_supersede_mood import _superseded

from gitmem.parse.dates import ends
from gitmem.parse.entities import relation, subject


@pytest.mark.parametrize("line, whose", [
    ("@Wanjiku: Her flatmate Kerubo moved out to Thika for a job at a bank.", "wanjiku's flatmate"),
    ("@Bruno: His niece got a place at the conservatory in Lyon.", "bruno's niece"),
    ("@Ana: Ana's husband sold the Panda.", "ana's husband"),  # a name without "@" owns the relation
    ("@Ana: Kerubo, her flatmate, moved to Thika.", "ana's flatmate"),
])
def test_a_relation_as_the_subject_is_someone_else(line: str, whose: str) -> None:
    assert subject(line) == ""
    assert relation(line) == whose


@pytest.mark.parametrize("line", [
    "@Tadeo: Xavier's partner; carries a Pixel 8 for work.",  # who Tadeo is, then his own phone
    "@Ana: Moved to Thika; her flatmate stays in Nyeri.",  # her own move first
    "@Ana: Her new Fairphone arrived on Monday.",  # a thing of hers, not a person
    "@Ana: Today's best offer was from the bakery.",  # a word opening the sentence owns nothing
])
def test_her_own_line_stays_hers(line: str) -> None:
    assert subject(line) is None


def test_another_persons_move_supersedes_nothing(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, [("2026-02-10", ["@Wanjiku: Teaches geography at a girls' school in Nyeri."]),
                               ("2026-05-04", ["@Wanjiku: Her flatmate Kerubo moved out to Thika for a new job at a bank."])])
    assert _superseded(ws) == []
    top = _top(ws, "What does Wanjiku do for a living?", "Wanjiku", "2026-06-01")
    assert top == "@Wanjiku: Teaches geography at a girls' school in Nyeri."


def test_a_relatives_move_does_not_answer_where_she_lives(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, [("2026-02-10", ["@Odhiambo: Lives in Kisumu, in a house near the lake."]),
                               ("2026-05-04", ["@Odhiambo: His niece moved to Mombasa after her exams and rents a room there."])])
    assert _top(ws, "Where does Odhiambo live?", "Odhiambo", "2026-06-01") == "@Odhiambo: Lives in Kisumu, in a house near the lake."


@pytest.mark.parametrize("text, written, last", [
    ("Honey is 700 shillings a kilo for July only.", "2026-07-02", "2026-07-31"),
    ("July only: the pool opens at seven.", "2026-07-02", "2026-07-31"),
    ("On sabbatical for a year, writing in Crete.", "2026-03-01", "2027-03-01"),
    ("Covering the night desk for a month.", "2026-03-01", "2026-03-31"),
    ("Reachable on a Kenyan SIM for the next ten days.", "2026-03-01", "2026-03-11"),
    ("Working from the Lisbon office this month.", "2026-03-04", "2026-03-31"),
    ("Staying at the beach house this summer.", "2026-06-20", "2026-08-31"),
    ("Goes to the beach house every July only.", "2026-06-20", None),  # a habit, not a while
    ("Trains twice a month for a year now.", "2026-06-20", None),  # how long it has gone on
    ("You may only park on the left.", "2026-06-20", None),  # the modal, not the month
    ("Moved to Leeds in July.", "2026-08-20", None),  # when, not a while
    ("Her driving test is booked for May.", "2026-02-01", None),  # a date set, not a while
    ("Moved to Lisbon in 2016 for a year.", "2026-04-11", None),  # a year written dates it
    ("Signalman at Pitlochry station for 31 years.", "2026-08-20", None),  # how long it has lasted
    ("Piano lessons are on Saturdays from this term.", "2026-03-04", None),  # a start, not a while
])
def test_a_bounded_period_ends(text: str, written: str, last: str | None) -> None:
    end = ends(text, date.fromisoformat(written))
    assert (end.isoformat() if end else None) == last


def test_a_price_for_one_month_is_over_after_it(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, [("2026-02-10", ["@Baraka: Sells his honey at 900 shillings a kilo at the Saturday market."]),
                               ("2026-07-02", ["@Baraka: Honey is 700 shillings a kilo for July only, a harvest offer."])])
    question = "How much is Baraka's honey a kilo?"
    assert "700 shillings" in _top(ws, question, "Baraka", "2026-07-20")
    assert "900 shillings" in _top(ws, question, "Baraka", "2026-08-20")


@pytest.mark.parametrize("new, current", [
    ("The Eldoret flat is let out; she and the kids are in a bungalow in Nakuru, near the school.", True),
    ("The Eldoret flat was repainted over the long weekend, and the kids helped.", False),  # done to it, nothing new
], ids=["let-out-and-a-new-home", "repainted-nothing-new"])
def test_an_end_told_in_the_passive(tmp_path: Path, new: str, current: bool) -> None:
    """No verb of change: the old value (the Eldoret flat) is the subject of a passive clause and a new
    name is given (Nakuru): the newer line answers. Without a new name it stays behind."""
    ws = _workspace(tmp_path, [("2026-02-12", ["@Njeri: Lives in Eldoret, near the stadium.", "@Njeri: Sews school uniforms."]),
                               ("2026-06-03", [f"@Njeri: {new}"])])
    top = _top(ws, "Where does Njeri live?", "Njeri", "2026-08-01")
    assert top == (f"@Njeri: {new}" if current else "@Njeri: Lives in Eldoret, near the stadium.")
