"""Issue 13, wave 21: "new" before a word two lines share is a cue only when that word is the thing
that is new. "New office rota, so she's in four days a week" shares "office" with "Catches the 6:48
bus on office days", but the new thing is a rota: the bus line stays current (it was marked
superseded). A new value of the shared thing ("a new phone number") still replaces the old one.
Real git repositories with pinned dates, real index, lexical recall; the sentences are no bench set's."""

from __future__ import annotations

from pathlib import Path

from test_attribute_recency import ask
from test_current_truth_wave7 import history


def test_a_new_thing_named_after_a_shared_word_replaces_nothing(tmp_path: Path) -> None:
    repo = history(tmp_path,
                   ("2025-02-10", ("W @Ingrid: Works from home Tuesdays and Thursdays.",
                                   "W @Ingrid: Catches the 6:48 bus on office days.")),
                   ("2025-09-15", ("W @Ingrid: New office rota, so she's in four days a week and home only on Thursdays.",)))
    bus = [r for r in ask(repo, "Which bus does Ingrid catch?", k=5, as_of="2025-10-01") if "ingrid" in r.entities]
    line = next(r for r in bus if "6:48 bus" in str(r.content))
    assert line.superseded_by is None and line.status != "superseded", line
    assert "6:48 bus" in str(bus[0].content), [str(r.content) for r in bus]


def test_a_new_value_of_the_shared_thing_still_replaces_the_old(tmp_path: Path) -> None:
    repo = history(tmp_path,
                   ("2025-02-10", ("W @Ingrid: Her phone number is 0771 234 567.",)),
                   ("2025-09-15", ("W @Ingrid: Has a new phone number, 0788 765 432.",)))
    shown = [r for r in ask(repo, "What is Ingrid's phone number?", k=5, as_of="2025-10-01", include_history=True)
             if "ingrid" in r.entities]
    assert "0788" in str(shown[0].content), [str(r.content) for r in shown]
    old = next(r for r in shown if "0771" in str(r.content))
    assert old.superseded_by is not None, old


def test_new_reads_the_word_it_names() -> None:
    from gitmem.index.supersede import Statement, supersedes

    def said(text: str, day: str) -> Statement:
        return Statement(f"memory/{day}.md", "world", True, ("ingrid",), text, day)

    bus = said("W @Ingrid: Catches the 6:48 bus on office days.", "2025-02-10")
    assert supersedes(said("W @Ingrid: New office rota, so she's in four days a week.", "2025-09-15"), bus) is None
    car = said("W @Ingrid: Drives a blue Golf.", "2025-02-10")
    assert supersedes(said("W @Ingrid: Her new car is a Tesla.", "2025-09-15"), car) is not None
    assert supersedes(said("W @Ingrid: The new car insurance is cheaper.", "2025-09-15"), car) is None


def test_a_span_without_what_a_habit_does_answers_ahead_of_the_habit(tmp_path: Path) -> None:
    # "Does Jarmila smoke?": the newer line never says she quit; it tells how long she has gone
    # without what the habit consumes (ranking only: the habit is still returned, not marked).
    repo = history(tmp_path,
                   ("2025-01-12", ("W @Jarmila: Smokes about fifteen a day, mostly on the fire escape.",
                                   "W @Jarmila: Restores church clocks in Olomouc.")),
                   ("2025-08-20", ("W @Jarmila: Seven months without a cigarette today; bought a bike with the savings.",)))
    before = [r for r in ask(repo, "Does Jarmila smoke?", k=5, as_of="2025-03-01") if "jarmila" in r.entities]
    assert "Smokes about fifteen a day" in str(before[0].content), [str(r.content) for r in before]
    after = [r for r in ask(repo, "Does Jarmila smoke?", k=5, as_of="2025-10-01") if "jarmila" in r.entities]
    assert "Seven months without a cigarette" in str(after[0].content), [str(r.content) for r in after]
    habit = next(r for r in after if "Smokes about fifteen" in str(r.content))
    assert habit.superseded_by is None and habit.status != "superseded", habit


def test_what_a_span_without_reads() -> None:
    from gitmem.parse.attributes import abstains

    assert abstains("@Ola: Six months without a cigarette as of today.") == ("cigarette",)
    assert abstains("@Ola: A full year smoke-free; celebrated with cake.") == ("smoke",)
    assert abstains("@Ola: Three months off the roll-ups, and the patches are done.") == ("roll-ups",)
    assert abstains("@Ola: Hasn't lit the pipe since the heart scare.") == ("pipe",)
    assert abstains("@Ola: Lives in Brno without a car.") == ()  # no span of time
    assert abstains("@Ola: Month six on the nicotine patches.") == ()


def test_a_span_without_something_else_leaves_the_habit_first(tmp_path: Path) -> None:
    # Gone without sugar is no answer to "Does Tobiasz smoke?"; and a span off work answers no habit
    # question told without a rate.
    repo = history(tmp_path,
                   ("2025-01-12", ("W @Tobiasz: Smokes about ten a day on his breaks.",
                                   "W @Tobiasz: Works at the tram depot in Krakow.")),
                   ("2025-08-20", ("W @Tobiasz: Three months without sugar in his coffee now.",
                                   "W @Tobiasz: Two weeks off work with a bad back.")))
    shown = [r for r in ask(repo, "Does Tobiasz smoke?", k=5, as_of="2025-09-01") if "tobiasz" in r.entities]
    assert "Smokes about ten a day" in str(shown[0].content), [str(r.content) for r in shown]


def test_an_email_address_given_where_the_old_account_is_closed_ranks_first(tmp_path: Path) -> None:
    # The old address's mailbox is said to be closed (an end by the grammar of the clause) and the
    # newer line gives another address: the new value is an address, not a name.
    repo = history(tmp_path,
                   ("2025-02-03", ("W @Radka: Email is radka.s@pelicanmail.cz.",
                                   "W @Radka: Binds books in a workshop in Brno.")),
                   ("2025-11-10", ("W @Radka: Moved everything to rs@lindenpost.net; the pelicanmail account is closed.",)))
    shown = [str(r.content) for r in ask(repo, "What is Radka's email address?", k=5, as_of="2025-12-01")
             if "radka" in r.entities]
    assert "rs@lindenpost.net" in shown[0], shown
    assert any("radka.s@pelicanmail.cz" in s for s in shown[1:]), shown
