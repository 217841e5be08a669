"""Issue 13, wave 20: one occasion ("Took the tram today because the bike had a puncture", "Missed
Sunday dinner ..., first time in years") ranked above the habit it departs from ("Cycles to the office
every day", "... every week, without fail") for a question about the usual state. Now the habit goes
first (`currency._over_occasion`, parse.mood `occasion` / `habitual`) and the occasion is still
returned below it; asked about the occasion itself (told in the past) the occasion keeps first.
Real git repositories with pinned dates, real index, lexical recall; the sentences are no bench set's."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_attribute_recency import ask
from test_current_truth_wave7 import history

from gitmem.parse import mood


def test_one_occasion_and_a_habit_are_read_by_their_grammar() -> None:
    assert mood.occasion("@Odile: Took the ferry today because the bridge was shut.")
    assert mood.occasion("@Radek: Skipped choir practice for the derby, first time in years.")
    assert mood.occasion("@Radek: Had a cigarette at the stag do, his first in two decades.")
    # A change told with a week or a month is no occasion, nor a state since a day.
    assert not mood.occasion("@Odile: Started at the harbour office this week.")
    assert not mood.occasion("@Odile: Off the bike since yesterday with a sprained wrist.")
    assert mood.habitual("@Odile: Walks the dog along the canal every morning.")
    assert mood.habitual("@Radek: Sings with the choir every Thursday without fail.")
    assert mood.habitual("@Radek: Has not smoked for fifteen years.")
    assert not mood.habitual("@Odile: Lives in Ghent.")
    assert mood.asks_occasion("Why did Odile take the ferry?")
    assert mood.asks_occasion("What happened at choir on Thursday?")
    assert not mood.asks_occasion("How does Odile get to work?")


# (days, question, as of, the entity, the habit, the occasion, a question about the occasion)
CASES = {
    "a ferry today over cycling every day": (
        (("2026-02-02", ("W @Odile: Cycles to the office every day, even in the sleet.",)),
         ("2026-03-10", ("W @Odile: Took the ferry today because the bike had a flat tyre.",))),
        "How does Odile get to work?", "2026-03-20", "Odile", "Cycles to the office every day",
        "Took the ferry today", "Why did Odile take the ferry?"),
    "a missed lunch, first time in years": (
        (("2026-01-08", ("W @Radek: Has Friday lunch at his brother's every week, without fail.",)),
         ("2026-04-17", ("W @Radek: Missed Friday lunch at his brother's because of the rail strike, first time in years.",))),
        "What does Radek do on Fridays?", "2026-05-01", "Radek", "Has Friday lunch at his brother's every week",
        "Missed Friday lunch", "What happened to Radek's Friday lunch?"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_habit_ranks_above_one_occasion_that_departs_from_it(tmp_path: Path, case: str) -> None:
    days, q, day, entity, habit, once, about = CASES[case]
    repo = history(tmp_path, *days)
    results = ask(repo, q, k=5, as_of=day)
    shown = [str(r.content) for r in results if entity.lower() in r.entities]
    assert habit in shown[0], shown
    # Not hidden: the occasion is still returned, below the habit, and not marked replaced.
    below = [r for r in results if once in str(r.content)]
    assert below and below[0].status == "current" and below[0].superseded_by is None, results
    # Asked about the occasion itself, it is the answer.
    first = [str(r.content) for r in ask(repo, about, k=5, as_of=day) if entity.lower() in r.entities]
    assert once in first[0], first
