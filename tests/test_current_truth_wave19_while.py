"""Issue 13, wave 19: a stay that holds until something else happens ("Staying with his parents
until the renovation is done", "at her sister's while the builders redo her kitchen") ranked above
the later line that reports that thing, because it holds the question's words and names no day its
expiry could read. Now the later line goes first (`currency._ends_while`, parse.dates
`end_condition`) and the stay is still returned below it: ranking only, nothing is marked replaced.
Real git repositories with pinned dates, real index, lexical recall; the sentences are no bench set's."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_attribute_recency import ask
from test_current_truth_wave7 import history

from gitmem.parse import dates


def test_the_clause_that_ends_a_stay_is_read_only_when_it_names_no_day() -> None:
    assert dates.end_condition("@Ruairi: Staying with his aunt in Kinsale until the roof is fixed, maybe May.") == "the roof is fixed"
    assert dates.end_condition("@Maren: Lodging at her cousin's in Lund while the plumbers redo her bathroom.") \
        == "the plumbers redo her bathroom"
    # A day or a month is the expiry's to read, not an event to wait for.
    assert dates.end_condition("@Ruairi: Staying with his aunt until the end of June.") == ""
    assert dates.end_condition("@Ruairi: On leave until Hetty is back in November.") == ""
    assert dates.end_condition("@Ruairi: Away till Friday.") == ""
    # "While" contrasting two states is no while: only after a progressive opening.
    assert dates.end_condition("@Maren: Works in Malmo while her husband works in Lund.") == ""


# (days, question, as of, the entity, the line that holds now, the stay it ended)
CASES = {
    "until a renovation is done": (
        (("2026-01-05", ("W @Ruairi: Owns a cottage in Dingle, being re-roofed.", "W @Ruairi: Works as a ferry mechanic.")),
         ("2026-01-09", ("W @Ruairi: Staying with his aunt in Kinsale until the roofing is finished, probably April.",)),
         ("2026-04-18", ("W @Ruairi: Roofing finished at last; sleeping in Dingle again among the boxes.",))),
        "Where is Ruairi staying now?", "2026-05-02", "Ruairi", "sleeping in Dingle again", "Staying with his aunt"),
    "while the builders redo a bathroom": (
        (("2026-02-10", ("W @Maren: Lodging at her cousin's in Lund while the plumbers redo her bathroom.",
                         "W @Maren: Sings in the cathedral choir on Thursdays.")),
         ("2026-06-14", ("B @Maren: Showed us round her flat, the new bathroom tiles are a deep green.",))),
        "Where is Maren lodging now?", "2026-07-01", "Maren", "new bathroom tiles", "Lodging at her cousin's"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_later_report_of_what_a_stay_waited_on_ranks_above_the_stay(tmp_path: Path, case: str) -> None:
    days, q, day, entity, holds, stay = CASES[case]
    repo = history(tmp_path, *days)
    shown = [str(r.content) for r in ask(repo, q, k=5, as_of=day) if entity.lower() in r.entities]
    assert holds in shown[0], shown
    # Not hidden: the stay is still returned, below it, and not marked replaced.
    below = [r for r in ask(repo, q, k=5, as_of=day) if stay in str(r.content)]
    assert below and below[0].status == "current" and below[0].superseded_by is None, below
    # Before the stay ended it is the answer.
    stayed = next(d for d, lines in days if any(stay in line for line in lines))
    first = [str(r.content) for r in ask(repo, q, k=5, as_of=stayed) if entity.lower() in r.entities]
    assert stay in first[0], first


def test_a_stay_of_someone_whose_name_ends_in_ed_expires() -> None:
    # "@Winfried: Staying ..." read as a past tense ("Winfri" + "ed"): every state of such a person
    # was a report of something done, so a stay "until the end of June" never expired.
    from gitmem.index.supersede import is_event

    assert not is_event("@Winfried: Staying with his sister in Graz until the end of June.")
    assert not is_event("@Khaled: Lives in Aswan.")
    assert is_event("@Khaled: Bought a felucca.")


def test_the_home_of_someone_whose_name_ends_in_ed_is_back_first_once_a_stay_is_over(tmp_path: Path) -> None:
    repo = history(tmp_path,
                   ("2026-01-12", ("W @Winfried: Lives in Leoben, near the main square.",)),
                   ("2026-05-04", ("W @Winfried: Staying with his sister in Graz until the end of June while his flat is being rewired.",)))
    during = [str(r.content) for r in ask(repo, "Where is Winfried living?", k=5, as_of="2026-06-10") if "winfried" in r.entities]
    assert "Staying with his sister" in during[0], during
    after = [str(r.content) for r in ask(repo, "Where is Winfried living?", k=5, as_of="2026-08-10") if "winfried" in r.entities]
    assert "Lives in Leoben" in after[0], after
    assert any("Staying with his sister" in s for s in after[1:]), after
