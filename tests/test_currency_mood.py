"""What is true now, read by mood, tense and effective date (issue 13, wave 12, truth12).

A newer line that asserts no present value must not go ahead of the current fact: a daydream, a bid
that was lost, a story of the past retold, a stay that comes back once a year, a change that takes
effect after the day asked about, a thing said to stay as it is. And a temporary value is the
current one inside its window (a fortnight, a month named whole, Ramadan) and not after it. Invented
sentences in the shapes of the current-truth sets' misses; real git repository, real index, real
recall. Each question checks the content of the first result about the entity."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from gitrepo import GitRepo

from gitmem.index.indexer import update
from gitmem.parse.dates import ends, starts
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace


def _workspace(tmp_path: Path, days: list[tuple[str, list[str]]]) -> Workspace:
    repo = GitRepo.init(tmp_path / "ws")
    for day, lines in days:
        body = f"# {day}\n\n## Retain\n" + "".join(f"- W {b}\n" for b in lines)
        repo.commit(day, day, {f"memory/{day}.md": body})
    ws = Workspace(repo.path)
    update(ws)
    return ws


def _top(ws: Workspace, question: str, entity: str, as_of: str) -> str:
    """The first result about `entity` (as bench/current_truth.py judges)."""
    with Session(ws) as s:
        res = s.search(question, Options(k=10, as_of=as_of)).results
    return next(r.content for r in res if entity.lower() in r.entities)


@pytest.mark.parametrize("old, new, question", [
    ("Runs a cooking school in the old town of Ghent.",
     "Daydreams about selling up and opening a bookshop in Bruges one day, but the school is full until spring.",
     "What does Mara do for work?"),
    ("Rents a flat in Porto near the Bolhão market.",
     "Bid on a farmhouse in Braga at the council auction and was outbid at the last minute.",
     "Where does Mara live?"),
    ("Lives in Graz, in a flat by the Mur.",
     "Over lunch she told the story of the summer she lived on a boat in Split in the eighties.",
     "Where does Mara live?"),
    ("Rents a flat in Pune near the university.",
     "Rents a houseboat in Alleppey for a week every Onam with her cousins.",
     "Where does Mara live?"),
], ids=["daydream", "lost-bid", "story-retold", "once-a-year"])
def test_a_newer_line_asserting_no_present_value_stays_behind(tmp_path: Path, old: str, new: str, question: str) -> None:
    ws = _workspace(tmp_path, [("2026-02-10", [f"@Mara: {old}", "@Mara: Swims at the lido on Sundays."]),
                               ("2026-06-15", [f"@Mara: {new}"])])
    assert _top(ws, question, "Mara", "2026-08-01") == f"@Mara: {old}"


def test_a_yearly_stay_still_answers_when(tmp_path: Path) -> None:
    """Once a year is a value of when: asked when, the yearly line may answer."""
    ws = _workspace(tmp_path, [("2026-02-10", ["@Mara: Rents a flat in Pune near the university."]),
                               ("2026-06-15", ["@Mara: Rents a houseboat in Alleppey for a week every Onam."])])
    assert "every Onam" in _top(ws, "When does Mara rent the houseboat?", "Mara", "2026-08-01")


def test_a_thing_said_to_stay_as_it_is_keeps_its_value(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, [
        ("2026-02-10", ["@Relay: The billing cluster runs Postgres 15 on two nodes.", "@Relay: Deploys go through Terraform 1.5."]),
        ("2026-05-14", ["@Relay: Postgres is on 16 after Sunday's upgrade; Terraform stays where it is."])])
    assert _top(ws, "Which Terraform version does Relay use?", "Relay", "2026-06-01") == "@Relay: Deploys go through Terraform 1.5."
    # The clause about the other thing is still its news: the line is not refused as a whole.
    assert "on 16 after Sunday" in _top(ws, "Which Postgres version does Relay run?", "Relay", "2026-06-01")


def test_a_change_from_a_later_month_waits_for_it(tmp_path: Path) -> None:
    """"Letter from the gym: from October she pays ..." takes effect in October, not on the day the
    letter came (the first "from" names who wrote, the second when)."""
    ws = _workspace(tmp_path, [("2026-02-10", ["@Ines: Pays €45 a month for the climbing gym.", "@Ines: Teaches yoga."]),
                               ("2026-06-03", ["@Ines: Letter from the gym: from October she pays €52 a month."])])
    assert _top(ws, "What does Ines pay for the gym?", "Ines", "2026-07-10") == "@Ines: Pays €45 a month for the climbing gym."
    assert "€52" in _top(ws, "What does Ines pay for the gym?", "Ines", "2026-11-01")
    assert starts("Letter from the gym: from October she pays €52 a month.", date(2026, 6, 3)) == date(2026, 10, 1)
    assert starts("Took a job that starts in March 2027.", date(2026, 9, 30)) == date(2027, 3, 1)


@pytest.mark.parametrize("temp, written, inside, after", [
    ("On a Dutch SIM, +31 6 1234 5678, for the fortnight of the Utrecht course.", "2026-09-14", "2026-09-20", "2026-10-20"),
    ("Covering as head of the kitchen for the whole of March while the chef is away.", "2026-02-25", "2026-03-16", "2026-05-04"),
], ids=["fortnight", "whole-month"])
def test_a_temporary_value_leads_inside_its_window_only(tmp_path: Path, temp: str, written: str, inside: str, after: str) -> None:
    ws = _workspace(tmp_path, [("2026-02-03", ["@Oda: Sous-chef at the harbour restaurant; her mobile is +47 912 34 567."]),
                               (written, [f"@Oda: {temp}"])])
    assert _top(ws, "What is Oda's job and number?", "Oda", inside) == f"@Oda: {temp}"
    assert _top(ws, "What is Oda's job and number?", "Oda", after) != f"@Oda: {temp}"


def test_ramadan_and_other_windows_are_read() -> None:
    from gitmem.parse.dates import ramadan  # new in wave 12 (imported here so the other tests run on older code)

    start, eid = ramadan(1447)
    assert (start, eid) == (date(2026, 2, 18), date(2026, 3, 20))  # announced: 18 Feb, Eid 20 Mar 2026
    assert ramadan(1446)[0] == date(2025, 3, 1)
    text = "During Ramadan the shop keeps 10:00 to 16:00; the usual hours come back after Eid."
    assert ends(text, date(2026, 2, 17)) == date(2026, 3, 20)
    assert ends("Boarding at a kennel for the three weeks he is away.", date(2026, 7, 1)) == date(2026, 7, 22)
    assert ends("Works from the library until the office reopens at the end of May.", date(2026, 4, 7)) == date(2026, 5, 31)


def test_a_change_said_to_wait_and_a_viewing_are_no_new_value(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, [
        ("2026-02-10", ["@Quill: The billing app; built on Django 4.2.", "@Quill: Its queue is RabbitMQ 3.11 on one node.",
                        "@Mara: Lives in a cottage in Dingle.", "@Mara: Guides boat trips to the Blaskets."]),
        ("2026-05-19", ["@Quill: Django 5.1 went live on Tuesday after the upgrade sprint; the RabbitMQ upgrade waits until Q4.",
                        "@Mara: Went to a viewing of a flat in Tralee; too far from the harbour, she is staying put."])])
    assert _top(ws, "Which RabbitMQ does Quill use?", "Quill", "2026-06-10") == "@Quill: Its queue is RabbitMQ 3.11 on one node."
    assert "Django 5.1 went live" in _top(ws, "Which Django version is Quill on?", "Quill", "2026-06-10")
    assert _top(ws, "Where does Mara live?", "Mara", "2026-06-15") == "@Mara: Lives in a cottage in Dingle."


def test_more_ends_are_read() -> None:
    written = date(2026, 6, 1)  # a Monday
    assert ends("Head chef until the last week of August while the chef is away.", written) == date(2026, 8, 31)
    assert ends("The laptop is at the repair centre till Friday week; borrowing a Dell meanwhile.", written) == date(2026, 6, 12)
    assert ends("Crewing on a trawler out of Kodiak for the season; back mid-September.", written) == date(2026, 9, 30)
    # A return told as a report, or "back to" a place, names no end.
    assert ends("Came back in June from Lisbon.", written) is None
    assert ends("Lives in Ulsan; back to Busan at weekends.", written) is None
