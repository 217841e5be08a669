"""Issue 13, wave 22: a trap guard gives way to a sure model (recall/learned.py SURE_THRESHOLD), except
on a yes/no question (learned.YES_NO_YIELDS). Real git repositories, the real index, the shipped
weights. The sentences are no bench set's."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_current_truth_wave7 import history, nothing_hidden
from test_current_truth_wave10_learned import ask, top

from gitmem.recall import learned, learned_model
from gitrepo import GitRepo

# The staff told by who is left: no word of the question, and one act (letting two go). Two of the
# guards refuse it, both of the kind that gives way; yet it is the answer.
STAFF = (("2026-01-12", ("W @Maelle: Her bakery in Quimper has four staff besides her.",
                         "W @Maelle: Plays the bombarde in a bagad.")),
         ("2026-04-20", ("W @Maelle: Had to let two go after a slow spring; it's her and Yann behind the counter now.",)))
# One act near the asked habit that answers nothing, refused by the same kind of guards, and the
# model as sure of it: a yes/no question keeps its direct answer.
GALA = (("2026-01-12", ("W @Ines: Goes swimming at the harbour baths every morning before work.",
                        "W @Ines: Teaches maths in Setubal.")),
        ("2026-04-20", ("W @Ines: Coached the school's swim team at the regional gala.",)))


def scored(repo: GitRepo, q: str, as_of: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float, tuple[str, ...]]]:
    """What the model scored for `q`: (the newer line, its probability, the guards refusing it)."""
    record: list[learned.Scored] = []
    monkeypatch.setattr(learned, "RECORD", record)
    ask(repo, q, as_of)
    monkeypatch.setattr(learned, "RECORD", None)
    return [(b, p, g) for s in record for b, _, p, g in s.others]


def test_the_shipped_model_gives_way_only_when_sure() -> None:
    assert learned_model.AFTER_THRESHOLD < learned_model.SURE_THRESHOLD <= 1.0
    assert not learned.YES_NO_YIELDS


def test_a_guard_gives_way_to_a_sure_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = history(tmp_path, *STAFF)
    q, old, new = "How many people work at Maelle's bakery?", "four staff", "let two go"
    (_, p, refused), = [s for s in scored(repo, q, "2026-06-01", monkeypatch) if new in s[0]]
    # The path under test: refused, by guards that give way only, and sure.
    assert refused and set(refused) <= learned.YIELDING and p >= learned_model.SURE_THRESHOLD
    results = ask(repo, q, "2026-06-01")
    assert new in top(results, "maelle")
    assert nothing_hidden(results) and any(old in r.content for r in results)  # ranking only
    assert old in top(ask(repo, q, "2026-03-01"), "maelle")  # before the change
    # Never giving way, the guards keep the old count first.
    monkeypatch.setattr(learned_model, "SURE_THRESHOLD", 1.01)
    assert old in top(ask(repo, q, "2026-06-01"), "maelle")
    # Nor does a guard that is not of that kind give way, however sure.
    monkeypatch.setattr(learned_model, "SURE_THRESHOLD", p - 0.001)
    monkeypatch.setattr(learned, "YIELDING", learned.YIELDING - set(refused))
    assert old in top(ask(repo, q, "2026-06-01"), "maelle")


def test_a_yes_no_question_keeps_its_direct_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = history(tmp_path, *GALA)
    q, old, trap = "Does Ines swim in the mornings?", "every morning", "regional gala"
    (_, p, refused), = [s for s in scored(repo, q, "2026-06-01", monkeypatch) if trap in s[0]]
    assert refused and set(refused) <= learned.YIELDING and p >= learned_model.SURE_THRESHOLD
    assert old in top(ask(repo, q, "2026-06-01"), "ines")
    # The exemption is what holds it: let yes/no questions yield and the gala goes first.
    monkeypatch.setattr(learned, "YES_NO_YIELDS", True)
    assert trap in top(ask(repo, q, "2026-06-01"), "ines")
