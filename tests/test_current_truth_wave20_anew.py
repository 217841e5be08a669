"""Issue 13, wave 20: an amount, a count or a date told anew ("Got bumped to 55k", "put the rent up to
905 euros from March", "new slot is 22 May", "Adopted a third dog") ranked under the older value,
because the newer line holds none of the question's words. Now the form says it is the same value
reached (`currency._told_anew`, parse.answers `reached`; an ordinal counts its noun: `ordinal_counts`)
and the newer line goes first, the older still returned below it: ranking only, nothing is marked
replaced. A change dated ahead is not current before its day. Real git repositories with pinned
dates, real index, lexical recall; the sentences are no bench set's."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_attribute_recency import ask
from test_current_truth_wave7 import history

from gitrepo import GitRepo

from gitmem.parse import answers


def about(repo: GitRepo, q: str, day: str, entity: str) -> list[str]:
    """What recall returns of `entity` for `q` as of `day`, in order."""
    return [str(r.content) for r in ask(repo, q, k=5, as_of=day) if entity.lower() in r.entities]


def test_a_value_told_as_reached_is_read_in_its_clause() -> None:
    assert answers.reached("@Oskar: Got bumped to 55k after the appraisal.") == ("bumped to 55k after the appraisal",)
    assert answers.reached("@Pekka: Clinic rang, cancelled again; new slot is 22 May.") == ("new slot is 22 May",)
    assert answers.reached("@Aino: Three joined in spring, so she has nine people now.") == (" so she has nine people now",)
    assert answers.reached("@Aino: Team cut to four after the merger.") == ("cut to four after the merger",)
    # A place reached is no value of these types; a clause without the form gives none.
    assert answers.reached("@Aino: Moved to Tampere in 2024.") == ()
    assert answers.reached("@Aino: Earns 48k as a surveyor.") == ()
    assert answers.amount_units("Pays 820 euros a month") == {"euro", "month"}
    assert answers.amount_units("Earns 48k") == {"k"}
    assert answers.days_given("new slot is 22 May") == {"may"}
    assert ("dog", "3") in answers.ordinal_counts("Adopted a third dog from the shelter")
    assert "money" in answers.expects("What does Oskar earn?")


# (days, question, as of, the entity, the line that holds now, the older value)
CASES = {
    "a salary bumped": (
        (("2026-01-05", ("W @Oskar: Earns 48k as a surveyor.", "W @Oskar: Plays bandy on Sundays.")),
         ("2026-04-18", ("W @Oskar: Got bumped to 55k after the appraisal.",))),
        "What is Oskar's salary?", "2026-05-02", "Oskar", "bumped to 55k", "Earns 48k"),
    "a new date for an operation": (
        (("2025-11-03", ("W @Pekka: Knee operation booked for 4 February at the district hospital.",
                         "W @Pekka: Retired ferry pilot.")),
         ("2026-01-20", ("W @Pekka: Clinic rang, cancelled again; new slot is 22 May.",))),
        "When is Pekka's knee operation?", "2026-02-10", "Pekka", "new slot is 22 May", "booked for 4 February"),
    "a team cut": (
        (("2025-02-03", ("W @Aino: Manages a team of seven testers.",)),
         ("2025-10-14", ("W @Aino: Team cut to four after the merger.",))),
        "How many people does Aino manage?", "2025-11-01", "Aino", "cut to four", "team of seven"),
    "a third dog": (
        (("2025-03-01", ("W @Ilse: Has two dogs, Pepper and Moss.",)),
         ("2025-09-12", ("W @Ilse: Adopted a third dog from the shelter, a grey lurcher.",))),
        "How many dogs does Ilse have?", "2025-10-01", "Ilse", "third dog", "Has two dogs"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_value_told_anew_ranks_above_the_older_value(tmp_path: Path, case: str) -> None:
    days, q, day, entity, holds, old = CASES[case]
    repo = history(tmp_path, *days)
    assert holds in about(repo, q, day, entity)[0]
    # Not hidden: the older value is still returned, below it, and not marked replaced.
    below = [r for r in ask(repo, q, k=5, as_of=day) if old in str(r.content)]
    assert below and below[0].status == "current" and below[0].superseded_by is None, below
    # Before the newer line was written the older value is the answer.
    assert old in about(repo, q, days[0][0], entity)[0]


def test_a_raise_from_a_later_month_is_current_once_that_month_has_come(tmp_path: Path) -> None:
    repo = history(tmp_path,
                   ("2025-04-02", ("W @Liisa: Earns 48k as a hydrologist.",)),
                   ("2026-01-10", ("W @Liisa: Contract renewed, bumped to 55k from March.",)))
    q = "What is Liisa's salary?"
    before = about(repo, q, "2026-02-01", "liisa")
    assert "Earns 48k" in before[0], before
    after = about(repo, q, "2026-04-01", "liisa")
    assert "bumped to 55k" in after[0], after
    assert any("Earns 48k" in s for s in after[1:]), after


def test_an_amount_in_another_unit_is_no_new_value(tmp_path: Path) -> None:
    # The rent is counted by the month in euros, the salary in thousands: two things, not one told anew.
    repo = history(tmp_path,
                   ("2025-04-02", ("W @Liisa: Pays 820 euros a month for a flat in Tartu.",)),
                   ("2025-09-10", ("W @Liisa: Salary went up to 52k with the new contract.",)))
    shown = about(repo, "How much rent does Liisa pay?", "2025-10-01", "liisa")
    assert "Pays 820 euros" in shown[0], shown


def test_an_amount_of_another_named_thing_is_no_new_value(tmp_path: Path) -> None:
    # "Broadband is now £28" tells a new amount of the broadband, not of the Spotify plan the question names.
    repo = history(tmp_path,
                   ("2025-02-08", ("W @Ruben: Pays £20 a month for broadband.", "W @Ruben: Pays £9 a month for Spotify Premium.")),
                   ("2025-05-02", ("W @Ruben: Broadband is now £28 a month, the offer ran out.",)))
    shown = about(repo, "How much does Ruben pay for Spotify?", "2025-06-01", "ruben")
    assert "Spotify Premium" in shown[0], shown
    broadband = about(repo, "How much does Ruben pay for broadband?", "2025-06-01", "ruben")
    assert "now £28" in broadband[0], broadband


def test_an_email_address_to_use_from_now_on_ranks_above_the_older_address(tmp_path: Path) -> None:
    repo = history(tmp_path,
                   ("2025-01-21", ("W @Wendelin: Email is wendelin.m@posteo.de.", "W @Wendelin: Restores clocks in Passau.")),
                   ("2025-08-14", ("W @Wendelin: Use clocks@wendelin-uhren.de from now on, he closed the posteo box.",)))
    results = ask(repo, "What is Wendelin's email address?", k=5, as_of="2025-09-01")
    shown = [str(r.content) for r in results if "wendelin" in r.entities]
    assert "clocks@wendelin-uhren.de" in shown[0], shown
    assert any("wendelin.m@posteo.de" in s for s in shown[1:]), shown
    assert answers.values("Use clocks@wendelin-uhren.de from now on", "email") == {"clocks@wendelin-uhren.de"}
    assert answers.values("@Wendelin: Restores clocks", "email") == frozenset()


def test_a_start_at_a_workplace_ranks_above_the_older_job(tmp_path: Path) -> None:
    from gitmem.parse.attributes import starts_work

    assert starts_work("@Gunnhild: Started this week as a data steward at the university hospital.")
    assert starts_work("@Gunnhild: Started at the county library in Molde.")
    # Something else started somewhere is no job; a start told with more between is not read.
    assert not starts_work("@Gunnhild: Started at the gym again.")
    assert not starts_work("@Gunnhild: Started Spanish classes at the college.")
    repo = history(tmp_path,
                   ("2025-03-02", ("W @Gunnhild: Works as a pharmacist at a chain store in Alesund.",
                                   "W @Gunnhild: Sings alto in the cathedral choir.")),
                   ("2025-09-15", ("W @Gunnhild: Started this week as a data steward at the university hospital.",)))
    shown = about(repo, "What is Gunnhild's job?", "2025-10-20", "gunnhild")
    assert "data steward" in shown[0], shown
    assert any("pharmacist at a chain store" in s for s in shown[1:]), shown
