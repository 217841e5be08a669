"""Updates a new writer tells that are no update (issue 13, wave 15, truth17).

Another @person's thing opening the clause is theirs ("@Mei: @Tomasz's leaving do was at the
boathouse"); "up to" before an amount is how high, not an end ("putting the rent up to €1,150 a month
from 1 May"); and four shapes say nothing of how things stand now, however new the line: an
intention told in the past ("Considered selling the van"), a future on a condition ("if the landlord
sells up she'll move"), a span of a life talked about ("went on about her years as a ship's cook")
and hearsay ("Rumour at the club is she's off to Dundee"). Invented sentences; real git repository,
real index, real recall (the first result about the entity, as bench/current_truth.py judges)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from test_currency_mood import _top, _workspace
from test_supersede_mood import _superseded

from gitmem.parse.dates import ends
from gitmem.parse.entities import subject


@pytest.mark.parametrize("line, whose", [
    ("@Mei: @Tomasz's leaving do was at the boathouse in Oranmore.", "tomasz"),
    ("@Mei: @Tomasz's van is in the garage again.", "tomasz"),
    ("@Mei: @Mei's own van is in the garage again.", None),  # her own name: hers
    ("@Tomasz's leaving do was at the boathouse.", None),  # filed under no one: about its first entity
])
def test_another_persons_thing_is_theirs(line: str, whose: str | None) -> None:
    assert subject(line) == whose


def test_another_persons_party_does_not_say_where_she_works(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, [("2026-02-10", ["@Mei: Runs a kayak school on Lough Corrib."]),
                               ("2026-05-04", ["@Mei: @Tomasz's retirement do was at the boathouse; forty years at the yard."])])
    assert _superseded(ws) == []
    assert _top(ws, "Where does Mei work?", "Mei", "2026-06-01") == "@Mei: Runs a kayak school on Lough Corrib."


@pytest.mark.parametrize("text, written, last", [
    ("The landlord is putting the rent up to €1,150 a month from 1 May.", "2026-02-01", None),
    ("Rent goes up to 910 from January.", "2025-11-20", None),
    ("Keeps up to six hives, until March.", "2026-01-20", "2026-03-31"),  # the until-word after it still ends
    ("At her mum's in Sligo up to 3 March.", "2026-01-20", "2026-03-03"),  # a date after "up to" is an end
    ("Borrowing the van up to Friday.", "2026-01-20", "2026-01-23"),
])
def test_up_to_an_amount_is_no_end(text: str, written: str, last: str | None) -> None:
    end = ends(text, date.fromisoformat(written))
    assert (end.isoformat() if end else None) == last


@pytest.mark.parametrize("old, new, question", [
    ("Drives a white Transit for the bakery rounds.",
     "Considered selling the Transit and driving an electric van; decided against it.",
     "What does Orla drive?"),
    ("Lives in Galway, in a flat over the chipper on Quay Street.",
     "Was all set to move to Berlin for a studio job; the visa never came through, so she stays put.",
     "Where does Orla live?"),
    ("Lives in Galway, in a flat over the chipper on Quay Street.",
     "Says if the landlord sells up she'll move in with her sister in Sligo.",
     "Where does Orla live?"),
    ("Teaches piano at the music school in Salthill.",
     "At the wedding went on about her years as a ship's cook in Bergen.",
     "What does Orla do for work?"),
    ("Lives in Galway, in a flat over the chipper on Quay Street.",
     "Rumour at the club is that she moved to Dundee in April.",
     "Where does Orla live?"),
], ids=["past-intention", "was-all-set-to", "conditional-future", "span-talked-about", "hearsay"])
def test_a_line_telling_nothing_of_now_stays_behind(tmp_path: Path, old: str, new: str, question: str) -> None:
    ws = _workspace(tmp_path, [("2026-02-10", [f"@Orla: {old}", "@Orla: Swims at Blackrock on Sundays."]),
                               ("2026-05-04", [f"@Orla: {new}"])])
    assert _superseded(ws) == []
    assert _top(ws, question, "Orla", "2026-06-01") == f"@Orla: {old}"


@pytest.mark.parametrize("old, new, question", [
    ("Lives in Galway, in a flat over the chipper on Quay Street.",
     "Moved to Sligo in April; if the job works out she'll buy a house there.",
     "Where does Orla live?"),
    ("Teaches piano at the music school in Salthill.",
     "Quit the music school; teaches piano from home about the town now.",
     "What does Orla do for work?"),
], ids=["a-move-beside-a-condition", "about-not-a-span"])
def test_a_real_change_still_goes_first(tmp_path: Path, old: str, new: str, question: str) -> None:
    ws = _workspace(tmp_path, [("2026-02-10", [f"@Orla: {old}"]), ("2026-05-04", [f"@Orla: {new}"])])
    assert _top(ws, question, "Orla", "2026-06-01") == f"@Orla: {new}"


@pytest.mark.parametrize("line", [
    "@Liviu: His clubmate Eoin is still running the Dublin 10k and will pace the 50-minute group.",
    "@Liviu: Her bandmate Niall moved to Cork.",
])
def test_a_clubmate_is_someone_else(line: str) -> None:
    assert subject(line) == ""


@pytest.mark.parametrize("old, new, question", [
    ("Sings in a ceilidh band called The Gorse Bushes.",
     "Posters for the Galway festival bill her band as Salt Marsh.",
     "What is Orla's band called?"),
    ("Runs a coffee cart called Bean There at the pier.",
     "The awning and the cups all read Tidewater since the relaunch; same pier, same hours.",
     "What is Orla's coffee cart called?"),
    ("Keeps a budgeting app called Pinchpenny on the go with two friends.",
     "Rebranded as Ledgerly and launched on the App Store in May.",
     "What is Orla's budgeting app called?"),
], ids=["billed-as", "a-sign-reads", "rebranded-as"])
def test_a_name_told_by_a_label_or_a_launch_goes_first(tmp_path: Path, old: str, new: str, question: str) -> None:
    ws = _workspace(tmp_path, [("2026-02-10", [f"@Orla: {old}", "@Orla: Swims at Blackrock on Sundays."]),
                               ("2026-05-04", [f"@Orla: {new}"])])
    assert _top(ws, question, "Orla", "2026-06-01") == f"@Orla: {new}"


@pytest.mark.parametrize("line", [
    "She says Leeds is too dear for a second flat.",  # a person says: no label
    "Works as a nurse at the Mercy.",  # a role, no name
    "Same as Galway, the rent is high.",
])
def test_no_name_given(line: str) -> None:
    from gitmem.parse.attributes import names_anew
    assert names_anew(line) == (False, "")
