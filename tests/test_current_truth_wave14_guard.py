"""Issue 13, wave 14: the guarded decision's own trap guard (recall/learned.py BESIDE_A_YES). For a
yes/no question whose older line states the very predicate asked, a newer line reporting something
done once that ends nothing (an instance of the habit: a drink at its club's bar) stays behind, where
wave 11's eight guards let the model put it first (that a change beside an older line that is no
direct yes still goes first: test_current_truth_wave11_guarded, "visa-used"). Real git repositories, real
index, the shipped weights; MODE "after" set here (it ships on since wave 16: bench/RESULTS.md,
"Current truth, wave 16"). The sentences are no bench set's."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_current_truth_wave7 import history, nothing_hidden
from test_current_truth_wave10_learned import ask, top

from gitmem.recall import currency, learned, learned_model

HABIT = (("2026-01-12", ("W @Marta: Plays squash on Tuesday evenings at the leisure centre.", "W @Marta: Works as a dental nurse.")),
         ("2026-04-03", ("W @Marta: Dropped by the squash club bar for a drink after work with @Lu.",)))


def test_an_instance_of_the_habit_asked_stays_behind_a_direct_yes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = history(tmp_path, *HABIT)
    q, old, trap = "Does Marta play squash?", "Tuesday evenings", "squash club bar"
    monkeypatch.setattr(learned, "MODE", "off")
    assert old in top(ask(repo, q, "2026-05-01"), "marta")  # off: the rules keep the old line
    monkeypatch.setattr(learned, "MODE", "after")
    monkeypatch.setattr(learned, "RECORD", [])
    results = ask(repo, q, "2026-05-01")
    assert old in top(results, "marta") and nothing_hidden(results)
    assert learned.RECORD is not None and len(learned.RECORD) == 1
    scored = [(p, g) for b, _, p, g in learned.RECORD[0].others if trap in b]
    assert len(scored) == 1
    p, refused = scored[0]
    # Only this guard holds it: the rules' eight let it through, and the model is past its threshold.
    assert refused == (learned.BESIDE_A_YES,) and p >= learned_model.AFTER_THRESHOLD
    monkeypatch.setattr(learned, "GUARDS", frozenset(currency.GUARDS))
    assert trap in top(ask(repo, q, "2026-05-01"), "marta")

