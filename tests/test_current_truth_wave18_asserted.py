"""Issue 13, wave 18: a newer line that asserts nothing of how things stand (a wish naming the new
home in passing, a condition told with a contracted "would", hearsay) ranked above the statement
that does, by being newest and holding the question's words. Now the statement goes first
(`currency._over_unasserted`; parse/mood.py's readings of a condition and of hearsay) and the other
line is still returned below it. Real git repositories with pinned dates, real index, lexical
recall; the sentences are no bench set's."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_attribute_recency import ask
from test_current_truth_wave7 import history, nothing_hidden

from gitmem.parse import mood
from gitmem.recall.result import Result


def about(results: list[Result], entity: str) -> list[str]:
    return [str(r.content) for r in results if entity.lower() in r.entities]


def test_a_conditional_with_a_contracted_would_and_hearsay_are_read() -> None:
    # A condition: "if ... she'd", "he'd ... if", after a verb of saying or not.
    assert mood.intends("@Bartholomew: Said that if his premium bonds ever came up he'd quit radiography.")
    assert mood.intends("@Odile: She'd pack it all in for a vineyard if the bakery ever sold.")
    # Not a contraction outside a condition: a present view ("says he'd never go back") stands.
    assert not mood.intends("@Ruben: Cycles everywhere now and says he'd never own a car again.")
    # Someone else's belief about the filed person is hearsay; the person's own belief, a verb of
    # saying, or an adverb before the verb is not.
    assert mood.reported("@Henrike: Her neighbour reckons she's been headhunted by a spa in Baden.")
    assert mood.reported("@Tam: @Oona thinks he has left the band.")
    assert mood.reported("@Tam: Oona's husband was convinced he had moved to Perth.")
    assert not mood.reported("@Henrike: Reckons the spa in Baden is overpriced.")
    assert not mood.reported("@Henrike: She thinks she'll stay at the Lindner.")
    assert not mood.reported("@Henrike: Her landlord says the rent goes up in May.")
    assert not mood.reported("@Henrike: Still believes it was worth it.")


# (days, question, as of, the entity, the statement that holds, the line that asserts nothing of now)
CASES = {
    "a wish naming the new home": (
        (("2026-01-12", ("W @Ottilie: Rents a room above a chemist in Leeds.",)),
         ("2026-06-08", ("W @Ottilie: Signed for a terraced house in Whitby and moved in on Friday.",
                         "W @Ottilie: Wants to buy a sea kayak now that she lives on the coast."))),
        "Where does Ottilie live now?", "2026-06-20", "Ottilie", "terraced house in Whitby", "sea kayak"),
    "a condition with a contracted would": (
        (("2026-02-03", ("W @Bartholomew: Works as a radiographer at the Royal Infirmary.",)),
         ("2026-07-14", ("W @Bartholomew: Said that if his premium bonds ever came up he'd quit radiography "
                         "and crew yachts in Antigua.",))),
        "What does Bartholomew do for a living?", "2026-08-01", "Bartholomew", "radiographer at the Royal Infirmary",
        "crew yachts in Antigua"),
    "hearsay": (
        (("2026-03-02", ("W @Henrike: Receptionist at the Lindner hotel in Ulm.",)),
         ("2026-09-21", ("W @Henrike: Her hairdresser reckons she's being poached by a clinic in Baden; "
                         "not a word from her about it.",))),
        "Where does Henrike work?", "2026-10-01", "Henrike", "Receptionist at the Lindner", "poached by a clinic"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_line_asserting_nothing_of_now_ranks_under_what_holds(tmp_path: Path, case: str) -> None:
    days, q, day, entity, holds, trap = CASES[case]
    repo = history(tmp_path, *days)
    shown = about(ask(repo, q, k=5, as_of=day), entity)
    assert holds in shown[0], shown
    # Not hidden: the wish, the condition, the hearsay is still returned, below it.
    assert any(trap in s for s in shown[1:]), shown


def test_a_plan_ends_no_home_but_a_changed_plan_replaces_the_plan(tmp_path: Path) -> None:
    # Blind sets 14 and 15 (wave 18): "Thinking about moving to ..." shares the cue "moving to" and the
    # home's attribute, and the index's supersession hid the home behind the plan.
    repo = history(tmp_path,
                   ("2026-01-15", ("W @Solveig: Lives in Hallstatt and walks to the salt museum where she works.",)),
                   ("2026-04-02", ("W @Solveig: Thinking about moving to Bad Ischl once her lease runs out in 2027.",)),
                   ("2026-05-20", ("W @Solveig: Now thinking about moving to Gmunden instead of Bad Ischl.",)))
    shown = ask(repo, "Where does Solveig live?", k=5, as_of="2026-06-01", include_history=True)
    home = next(r for r in shown if "Lives in Hallstatt" in str(r.content))
    assert home.superseded_by is None and shown[0] is home, [str(r.content) for r in shown]
    assert nothing_hidden(ask(repo, "Where does Solveig live?", k=5, as_of="2026-04-10"))
    # A plan still replaces the plan it changes.
    first_plan = next(r for r in shown if "Bad Ischl once" in str(r.content))
    assert first_plan.superseded_by is not None and "2026-05-20" in first_plan.superseded_by.source
