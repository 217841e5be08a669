"""What is true now, read from the question's attribute and from an update's consequence (issue 13,
wave 13, truth15).

A question names what it asks (where someone works, which editor, how many), read from its predicate
rather than its wh-word; a count answers "how many". And a later line that names the old value with an end of it (given away, over, sold)
and gives a new name is the current answer, whatever verb it chose. Invented sentences; real git
repository, real index, real recall. Each question checks the content of the first result about the
entity (as bench/current_truth.py judges)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_currency_mood import _top, _workspace

from gitmem.parse import attributes


@pytest.mark.parametrize("question, families", [
    ("Where does Efua work?", {"work"}),  # "where" asks a place; the predicate says which attribute
    ("Where is Efua?", {"residence"}),  # no predicate of its own: where she is
    ("Where does Efua live?", {"residence"}),
    ("What editor does Efua use?", set()),  # a trade named as the kind of thing asked for is a thing
    ("Is Efua a nurse?", {"work"}),
])
def test_the_question_attribute_comes_from_its_predicate(question: str, families: set[str]) -> None:
    assert attributes.asked(question) == frozenset(families)


def test_a_count_answers_how_many(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, [("2026-02-10", ["@Efua: Runs the village credit union.",
                                               "@Efua: Has three daughters, all at school in Accra."])])
    assert "three daughters" in _top(ws, "How many children does Efua have?", "Efua", "2026-03-01")


def test_the_asked_attribute_still_wins_its_own_question(tmp_path: Path) -> None:
    """The other line keeps its own question: "Where does Efua live?" is still the home."""
    ws = _workspace(tmp_path, [("2026-02-10", ["@Efua: Lives in Cape Coast.", "@Efua: Welds hulls at a shipyard in Takoradi."])])
    assert _top(ws, "Where does Efua live?", "Efua", "2026-03-01") == "@Efua: Lives in Cape Coast."


def test_an_update_told_by_its_consequence_is_current(tmp_path: Path) -> None:
    """No verb of change: the old value (Pixel) named with its end (given away) and a new name (Fairphone)."""
    ws = _workspace(tmp_path, [
        ("2026-02-10", ["@Kofi: Carries a Pixel 7 as his phone, screen cracked.", "@Kofi: Swims at the lido on Sundays."]),
        ("2026-05-04", ["@Kofi: Picked up a Fairphone at the repair café and gave the Pixel away to his cousin."])])
    assert "Fairphone" in _top(ws, "Which phone does Kofi use?", "Kofi", "2026-06-01")
    # Before the change the old phone is the answer.
    assert "Pixel 7" in _top(ws, "Which phone does Kofi use?", "Kofi", "2026-03-01")


def test_a_new_count_of_the_noun_asked_in_other_words(tmp_path: Path) -> None:
    """"How many greenhouses": "five houses" counts them by the head noun (a compound and its head:
    parse.attributes.same_noun), though the newer line holds no word of the question."""
    ws = _workspace(tmp_path, [("2026-02-10", ["@Oti: Grows tomatoes in two greenhouses behind the farm."]),
                               ("2026-06-03", ["@Oti: Put up another frame in May; five houses of tomatoes now, with peppers too."])])
    assert "five houses" in _top(ws, "How many greenhouses does Oti have?", "Oti", "2026-07-01")
    assert "two greenhouses" in _top(ws, "How many greenhouses does Oti have?", "Oti", "2026-04-01")


@pytest.mark.parametrize("old, new, current", [
    ("Sings tenor in the cathedral choir every Sunday.", "No longer sings; his voice went after the winter flu.", True),
    ("Swims lengths in the mornings before the office opens.", "Quit the swimming club's committee after the AGM row.", False),
], ids=["ends-the-predicate", "ends-something-next-to-it"])
def test_an_end_of_the_state_answers_a_yes_no_question(tmp_path: Path, old: str, new: str, current: bool) -> None:
    ws = _workspace(tmp_path, [("2026-02-10", [f"@Oti: {old}"]), ("2026-06-03", [f"@Oti: {new}"])])
    question = "Does Oti sing in the cathedral choir?" if current else "Does Oti swim in the mornings?"
    assert _top(ws, question, "Oti", "2026-07-01") == f"@Oti: {new if current else old}"
