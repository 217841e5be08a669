"""Issue 13, wave 6: recall knows what is true now without cue words, by mechanisms that do not
read one set's words: whom a statement is about (a line filed under one person about another
@person is that person's), expiries written as "until <date>" / "through May" without a window,
and two statements that give the same slot a new value. Real git repositories, real index."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_attribute_recency import ask, log, top_about

from gitmem.index.indexer import update
from gitmem.index.supersede import Statement, supersedes
from gitmem.parse.entities import about_someone_else, subject
from gitmem.workspace import Workspace


def test_whom_a_statement_is_about() -> None:
    # Another @person as the subject of a line filed under someone: that person's statement.
    assert subject("@Linnea: @Anders opened his own studio and left the design agency.") == "anders"
    assert subject("@Linnea: Her husband @Anders is a furniture designer.") == "anders"
    assert subject("@Emeka: His son @Chidi moved to Lagos for university.") == "chidi"
    # Any role before an @person, not only a relative's (held-out 3, read after its one run).
    assert subject("@Perpetua: Her flatmate @Nkechi works at a law firm in Holborn.") == "nkechi"
    assert subject("@Ivo: His new landlord, @Marta, raised the rent.") == "marta"
    assert subject("@Ivo: His landlord raised the rent.") is None  # no one named: still Ivo's line
    # An unnamed relative, or someone's relative: about someone, not the filed entity.
    assert subject("@Kira: Her brother lives in Seoul.") == ""
    assert subject("@Sam: @Zoe's parents moved to Leicester.") == ""
    # The filed entity itself, alone or with someone ("She and @Declan", "@Declan and she").
    assert subject("@Linnea: Left Spotify; joined Klarna as director of product.") is None
    assert subject("@Niamh: She and @Declan tied the knot at Kylemore Abbey.") is None
    assert subject("@Niamh: @Declan and she tied the knot.") is None
    assert subject("@Henrike: Her recipe-scaling app went live.") is None  # her thing, not a relative
    assert subject("@Alice moved to Madrid with @Bob.") is None
    assert about_someone_else("@Linnea: @Anders left the design agency.")
    assert not about_someone_else("@Linnea: Left Spotify for @Klarna.")


def test_another_persons_change_never_replaces_or_passes_the_filed_persons_own(tmp_path: Path) -> None:
    """Regression (held-out 2, wave 5): "@Anders opened his own studio ... and left the design
    agency", filed under Linnea, ranked above Linnea's own job for "Where does Linnea work?"."""
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("a", "2026-01-26", {".gitignore": ".memory/\n", **log(
        "2026-01-26", "W @Linnea: Product manager at Spotify in Stockholm.",
        "W @Linnea: Her husband @Anders is a furniture designer at an agency.")})
    repo.commit("b", "2026-03-16", log("2026-03-16", "W @Linnea: @Anders opened his own studio in Gamla Stan "
                                                     "and left the design agency."))
    repo.commit("c", "2026-04-27", log("2026-04-27", "W @Linnea: Left Spotify; joined Klarna as director of product.",
                                       "W @Linnea: @Anders works as a carpenter in Uppsala."))
    update(Workspace(repo.path))
    assert "Product manager at Spotify" in top_about(ask(repo, "Where does Linnea work?", as_of="2026-04-01"), "linnea")
    assert "joined Klarna" in top_about(ask(repo, "Where does Linnea work?", as_of="2026-06-01"), "linnea")
    # Anders's own statements do follow each other: his newer work is the answer about him.
    assert "carpenter in Uppsala" in top_about(ask(repo, "What does Anders do for work?", as_of="2026-06-01"),
                                               "anders")
    # Nothing about Anders is ever taken for a replacement of Linnea's job (index side).
    old = Statement("memory/2026-01-26.md", "world", True, ("linnea",), "@Linnea: Works at Spotify.", None)
    new = Statement("memory/2026-03-16.md", "world", True, ("linnea", "anders"),
                    "@Linnea: @Anders left Spotify; now works at a studio.", None)
    assert supersedes(new, old) is None
    assert supersedes(new._replace(content="@Linnea: Left Spotify; now works at a studio."), old)


def test_an_end_date_without_a_window_is_read() -> None:
    from datetime import date

    from gitmem.parse.dates import ends

    jan30 = date(2026, 1, 30)
    assert ends("On sabbatical through May, writing a revision guide.", jan30) == date(2026, 5, 31)
    assert ends("Away until the 14th.", jan30) == date(2026, 2, 14)  # the next 14th
    assert ends("Away until the 31st.", jan30) == date(2026, 1, 31)
    assert ends("Borrowing his sister's Fiat until the body shop finishes his car, around 6 March.",
                jan30) == date(2026, 3, 6)
    assert ends("Acting head while @Brenda is on leave, until the end of August 2026.", jan30) == date(2026, 8, 31)
    assert ends("In Lisbon until 6 January.", date(2025, 12, 20)) == date(2026, 1, 6)  # over the new year
    assert ends("Until mid-June in Oslo.", jan30) == date(2026, 6, 30)
    # A weekday, the next week or month, or a while counted from the day it was written (a Friday).
    assert ends("Away till Monday.", jan30) == date(2026, 2, 2)
    assert ends("Away till Friday.", jan30) == date(2026, 2, 6)  # not the day it was written
    assert ends("In Oslo until next week.", jan30) == date(2026, 2, 8)
    assert ends("Staying with her parents for two weeks.", jan30) == date(2026, 2, 13)
    # ... but not how long something has lasted, nor a stay dated elsewhere.
    assert ends("Has lived in Rome for ten years.", jan30) is None
    assert ends("Vegan for two months now.", jan30) is None
    assert ends("Planning a trip to Japan for two weeks in April.", jan30) is None
    # No date after the word, or another sense of it.
    assert ends("Walked through the park.", jan30) is None
    assert ends("You may stay until we decide.", jan30) is None
    assert ends("Works through the night.", jan30) is None


@pytest.fixture
def temporary(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("a", "2026-02-03", {".gitignore": ".memory/\n", **log(
        "2026-02-03", "W @Amadou: Drives a blue Skoda estate.", "W @Kwame: Teaches chemistry at Hollins Park.",
        "W @Dagny: Lives in Tromso with her partner.", "W @Ruairi: Deputy head of maths at St Columba's College.")})
    repo.commit("b", "2026-02-25", log(
        "2026-02-25", "W @Amadou: Borrowing his sister's Fiat until the body shop finishes his car, around 6 March.",
        "W @Kwame: On sabbatical through May, writing a revision guide.",
        "W @Dagny: In Lisbon on a work placement until 12 March 2026.",
        "W @Ruairi: Acting head of department while @Brenda is on leave, until the end of August 2026."))
    update(Workspace(repo.path))
    return repo


def test_a_temporary_state_is_the_answer_inside_its_end_and_past_after_it(temporary: GitRepo) -> None:
    """Regressions (held-out 2, wave 5): a borrowed car passed the owned one after it was given
    back; "Where is Dagny?" answered her home during a placement. Neither statement writes a
    window of days, only an end."""
    car = ask(temporary, "What car is Amadou driving?", as_of="2026-04-15")
    assert "blue Skoda" in top_about(car, "amadou")
    fiat = next(r for r in car if "Fiat" in r.content)
    assert fiat.past  # marked as over, not hidden
    assert "sister's Fiat" in top_about(ask(temporary, "What car is Amadou driving?", as_of="2026-03-01"), "amadou")
    assert "Lisbon" in top_about(ask(temporary, "Where is Dagny?", as_of="2026-03-05"), "dagny")
    assert "Tromso" in top_about(ask(temporary, "Where is Dagny?", as_of="2026-04-05"), "dagny")
    assert "sabbatical" in top_about(ask(temporary, "What is Kwame doing for work?", as_of="2026-04-01"), "kwame")
    assert "Teaches chemistry" in top_about(ask(temporary, "What is Kwame doing for work?", as_of="2026-07-01"),
                                            "kwame")
    # Inside its end a temporary role is the current one, whatever else the older line names.
    assert "Acting head" in top_about(ask(temporary, "What is Ruairi's role at St Columba's?", as_of="2026-05-05"),
                                      "ruairi")
    assert "Deputy head" in top_about(ask(temporary, "What is Ruairi's role at St Columba's?", as_of="2026-10-05"),
                                      "ruairi")


@pytest.fixture
def slots(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("a", "2026-01-10", {".gitignore": ".memory/\n", **log(
        "2026-01-10", "W @The-Castle: Runs Postgres 16; upgrade to 17 planned with the SSD swap.",
        "W @Idris: PhD viva scheduled for 3 June 2026 at Edinburgh.",
        "O(c=0.6) @Noor: Finds podcasts a waste of time; would rather read.",
        "W @Henrike: Building a recipe-scaling app she calls Larkspur.",
        "W @Halima: Manages a team of six at the freight firm.",
        "W @Yusuf: Lives on the 3rd floor of a block in Izmir.",
        "O(c=0.7) @Omar: Prefers tea to coffee.",
        "W @Esme: Wedding set for 5 September 2026 in Bath.",
        "W @Owen: Cycles to work every day.")},)
    repo.commit("b", "2026-03-08", log(
        "2026-03-08", "W @The-Castle: Now on a 2 TB SSD with Postgres 17.",
        "W @Idris: The examiners moved the viva to 9 September 2026.",
        "O(c=0.7) @Noor: Recommends a history podcast to me almost every week.",
        "W @Henrike: Her recipe-scaling app went live under the name Thimble.",
        "W @Halima: Her team is now eleven people after the merger.",
        "W @Yusuf: The lift to floors 5 to 9 is broken again.",
        "O(c=0.6) @Omar: Thinks the coffee at the office is undrinkable.",
        "W @Esme: Hen party on 15 August 2026 in Brighton.",
        "W @Owen: Off the bike until the end of March with a broken wrist; takes the bus."))
    update(Workspace(repo.path))
    return repo


def test_a_newer_value_of_the_same_slot_ranks_first_without_a_cue(slots: GitRepo) -> None:
    """Two statements naming the thing asked about give two values of one slot when they give it
    another number, another date set, an opinion, or the asked attribute where the older gives none."""
    def top(q: str, who: str, day: str = "2026-04-01") -> str:
        return top_about(ask(slots, q, as_of=day), who)

    assert "Postgres 17" in top("What Postgres version does The Castle run?", "the-castle")  # the demo's miss
    assert "9 September" in top("When is Idris's PhD viva?", "idris")
    assert "history podcast" in top("How does Noor feel about podcasts?", "noor")
    assert "Thimble" in top("What is Henrike's recipe app called?", "henrike")
    assert "eleven" in top("How big is Halima's team?", "halima")
    assert "takes the bus" in top("How does Owen get to work?", "owen", "2026-03-20")
    assert "Cycles to work" in top("How does Owen get to work?", "owen", "2026-05-01")  # over: resumes


def test_a_newer_statement_about_something_else_does_not_pass(slots: GitRepo) -> None:
    """Traps: the older statement is still the answer."""
    # A thing's numbers are not the entity's ("The lift to floors 5 to 9").
    assert "3rd floor" in top_about(ask(slots, "Which floor does Yusuf live on?", as_of="2026-04-01"), "yusuf")
    # An opinion on another thing that shares a word ("coffee"), the older naming what is asked ("tea").
    assert "Prefers tea" in top_about(ask(slots, "Does Omar prefer tea or coffee?", as_of="2026-04-01"), "omar")
    # Another event's date is not the wedding's.
    assert "5 September" in top_about(ask(slots, "When is Esme's wedding?", as_of="2026-04-01"), "esme")


def test_an_ending_verb_ends_the_state_and_a_one_off_activity_does_not(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("a", "2026-01-22", {".gitignore": ".memory/\n", **log(
        "2026-01-22", "W @Teodor: Learning Mandarin with a tutor twice a week.",
        "W @Sina: Plays tennis every Sunday at the club.")})
    repo.commit("b", "2026-04-08", log(
        "2026-04-08", "W @Teodor: Let the Mandarin tutoring lapse in March; says the tones beat him.",
        "W @Sina: Stopped at the tennis club cafe for lunch with @Jo."))
    update(Workspace(repo.path))
    assert "lapse" in top_about(ask(repo, "Is Teodor learning Mandarin?", as_of="2026-06-01"), "teodor")
    # "Stopped at" is a visit, and a one-off activity is an instance of a pastime, not a new one.
    assert "Plays tennis" in top_about(ask(repo, "Does Sina play tennis?", as_of="2026-06-01"), "sina")
