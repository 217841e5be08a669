"""A line that asserts no present value supersedes nothing and never answers ahead of what holds
(issue 13, wave 12, w12/mood14): a dream told in any form ("Dreamt she had quit teaching"), a span
of a life told again ("told us about the years he lived ..."), a yearly occasion followed by its
subject ("Every Eid she ..."). The readings live in parse/mood.py, asked by the index's derived
supersession and by recall's ranking. Invented sentences in the shapes of heldout9's misses; real
git repository, real index, real recall."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_current_truth_wave7 import history, top

from gitmem.index.indexer import update
from gitmem.parse import mood
from gitmem.workspace import Workspace


def _superseded(ws: Workspace) -> list[str]:
    """The content of every line the index marks superseded."""
    con = sqlite3.connect(ws.index_path)
    try:
        return [r[0] for r in con.execute("SELECT o.content FROM supersessions s JOIN chunks o ON o.id = s.old")]
    finally:
        con.close()


def test_a_dream_supersedes_nothing(tmp_path: Path) -> None:
    teaches = "@Leilani: Teaches chemistry at a secondary school in Hilo."
    repo = history(
        tmp_path,
        ("2026-03-09", ("W " + teaches, "W @Leilani: Paddles outrigger canoe with a club on Saturdays.")),
        ("2026-08-17", ("B @Leilani: Dreamt she had quit teaching and opened a surf school in Kona; woke up relieved.",)))
    assert _superseded(Workspace(repo.path)) == []
    assert top(repo, "What does Leilani do for work?", "leilani", "2026-09-01") == teaches


def test_a_dream_told_with_a_contracted_auxiliary_supersedes_nothing(tmp_path: Path) -> None:
    # Blind set 15 (wave 18): "Dreamt she'd moved back to ..." read as a move, hiding the home.
    home = "@Oyuna: Lives in Darkhan and drives a tram on the night shift."
    repo = history(
        tmp_path,
        ("2025-06-11", ("W " + home,)),
        ("2025-11-02", ("W @Oyuna: Dreamt she'd moved back to Choibalsan and woke up missing the steppe.",)))
    assert _superseded(Workspace(repo.path)) == []
    assert top(repo, "Where does Oyuna live?", "oyuna", "2025-11-20") == home
    assert mood.no_present_value("@Oyuna: Dreamt he's left the tram depot.")
    assert not mood.no_present_value("@Oyuna: Landed her dream job at the depot.")


@pytest.mark.parametrize("old, new, question", [
    ("Lives in Olomouc near the Holy Trinity Column with his wife.",
     "B @Bohdan: Told us about the years he lived in a squat in Gdańsk in his twenties.",
     "Where does Bohdan live?"),
    ("Lives in Samarkand and teaches piano at the conservatory.",
     "W @Bohdan: Every Eid he stays a week at his parents' village near Khiva.",
     "Where does Bohdan live?"),
], ids=["years-retold", "yearly-occasion-then-subject"])
def test_a_newer_line_asserting_no_present_value_does_not_answer(tmp_path: Path, old: str, new: str, question: str) -> None:
    repo = history(tmp_path, ("2025-02-10", (f"W @Bohdan: {old}", "W @Bohdan: Repairs clocks for the town hall.")),
                   ("2025-06-16", (new,)))
    assert top(repo, question, "bohdan", "2025-08-01") == f"@Bohdan: {old}"
    assert _superseded(Workspace(repo.path)) == []


def test_the_readings_stay_off_real_changes() -> None:
    """The wider readings do not take a real change for a dream or a story."""
    for said in ("Landed her dream job at a studio in Lisbon.", "Dreamt up a new logo for the bakery.",
                 "Now dating a lawyer in his forties.", "Told me he now works at Arup."):
        assert mood.no_present_value(said) == "", said
    for said in ("Every Monday she swims at the lido.", "Every Friday he cooks for the shelter."):
        assert not mood.yearly(said), said


def test_an_index_derived_by_rules_2_drops_the_dream_link_on_its_next_update(tmp_path: Path) -> None:
    """RULES 3: an index whose links rules "2" derived (the dream replacing the teaching line) is
    derived again by its next update, and the wrong link is gone."""
    ws = Workspace(history(tmp_path, ("2026-03-09", ("W @Leilani: Teaches chemistry at a secondary school in Hilo.",)),
                           ("2026-08-17", ("B @Leilani: Dreamt she had quit teaching and opened a surf school in Kona.",))).path)
    con = sqlite3.connect(ws.index_path)
    try:
        old, new = (con.execute("SELECT id FROM chunks WHERE content LIKE ?", (f"%{w}%",)).fetchone()[0] for w in ("Teaches", "Dreamt"))
        con.execute("INSERT INTO supersessions VALUES (?, ?, (SELECT max(pos) FROM commits), 'rules 2')", (old, new))
        con.execute("UPDATE meta SET value = '2' WHERE key = 'derived_rules'")
        con.commit()
    finally:
        con.close()
    assert _superseded(ws) == ["@Leilani: Teaches chemistry at a secondary school in Hilo."]
    result = update(ws)
    assert any("derived the supersession links again" in n for n in result.notes)
    assert _superseded(ws) == []


def test_a_joke_and_a_condition_told_with_a_contracted_is_supersede_nothing(tmp_path: Path) -> None:
    # Blind set 18 (wave 21): "Said if the heating bill goes up again he's moving to the Faroes with
    # the sheep. (Joking.)" hid the farm he lives on. Invented lines of that shape:
    croft = "@Brannoch: Lives on a croft outside Lairg with thirty goats."
    bakery = "@Seonag: Runs the bakery on the harbour in Girvan."
    repo = history(
        tmp_path,
        ("2025-03-04", ("W " + croft, "W " + bakery)),
        ("2025-10-12", ("W @Brannoch: Said if the feed prices go up again he's moving to Orkney with the goats. (Joking.)",
                        "W @Seonag: Joked that she'd sell the bakery and sail to Tahiti in the spring.")))
    assert _superseded(Workspace(repo.path)) == []
    assert top(repo, "Where does Brannoch live?", "brannoch", "2025-11-01") == croft
    assert top(repo, "What does Seonag do?", "seonag", "2025-11-01") == bakery
    assert mood.no_present_value("@Brannoch: Said he's moving to Orkney. (Joking.)") == "a joke"
    assert mood.intends("@Brannoch: Said if the feed prices go up again he's moving to Orkney.")
    # Not the noun alone: a habit of telling jokes is a fact.
    assert mood.no_present_value("@Seonag: Tells jokes at the open mic on Fridays.") == ""
