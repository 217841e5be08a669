"""Issue 13, wave 11: the learned pair model after the rules, past their trap guards
(gitmem/recall/learned.py MODE "after", gitmem/recall/currency.refusals). Shipped on since wave 16.
Real git repositories, real index, the shipped weights. The sentences are no bench set's:
traps of the probe's shapes (a thing of the same topic sold, an instance of an activity, a relative's
move, another amount of money, the date of another event) on which the model alone puts the trap first, and an opinion reversed
by what is done, which no rule ties to the older line and the guarded model puts first."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_current_truth_wave7 import history, nothing_hidden
from test_current_truth_wave10_learned import ask, top

from gitmem.recall import currency, learned, learned_model

TRAPS = [
    ((("2026-01-12", ("W @Ilse: Keeps a sea kayak in the boathouse at Wannsee.", "W @Ilse: Teaches maths at a Gymnasium.")),
      ("2026-04-03", ("W @Ilse: Sold the old garden bench to a neighbour.",))),
     "Does Ilse still have the kayak?", "ilse", "sea kayak", "garden bench", currency.A_THING_IT_LACKS),
    ((("2026-01-12", ("W @Folake: Sings alto in the St Mary's parish choir.", "W @Folake: Works as a pharmacist.")),
      ("2026-04-03", ("W @Folake: Sang a solo at the choir's spring concert.",))),
     "Which choir does Folake sing in?", "folake", "St Mary's parish choir", "solo at the choir", currency.AN_INSTANCE),
    ((("2026-01-12", ("W @Rania: Lives in a flat in Amman with her sister.", "W @Rania: Works as a translator.")),
      ("2026-04-03", ("W @Rania: Her brother @Sami moved to a flat in Dubai.",))),
     "Where does Rania live?", "rania", "flat in Amman", "Dubai", currency.SOMEONE_ELSE),
    ((("2026-01-12", ("W @Tomas: Pays 700 euros a month for his studio in Brno.", "W @Tomas: Works as a sound engineer.")),
      ("2026-04-03", ("W @Tomas: Spends about 150 euros a month on groceries.",))),
     "How much rent does Tomas pay?", "tomas", "700 euros", "groceries", currency.A_THING_IT_LACKS),
    ((("2026-01-12", ("W @Dmitri: Recital set for 12 June 2026 at the conservatory.", "W @Dmitri: Teaches cello to children.")),
      ("2026-04-03", ("W @Dmitri: Dress rehearsal on 2 June 2026 in the small hall.",))),
     "When is Dmitri's recital?", "dmitri", "Recital set for", "Dress rehearsal", currency.NO_QUESTION_WORD),
]


def test_the_guarded_model_is_shipped_on_with_every_guard() -> None:
    assert learned.MODE == "after"
    # The rules' eight (currency.refusals) and the model's own: since wave 14 learned.BESIDE_A_YES,
    # since wave 16 learned.SAME_DAY; since wave 20 the rules' currency.ONE_OCCASION, listed apart.
    assert learned.GUARDS == frozenset(currency.GUARDS) | {learned.BESIDE_A_YES, learned.SAME_DAY, currency.ONE_OCCASION}
    assert len(currency.GUARDS) == 8
    assert 0.0 < learned_model.AFTER_THRESHOLD < 1.0


@pytest.mark.parametrize("days,q,entity,old,trap,guard", TRAPS, ids=["thing-sold", "instance", "relative", "other-amount",
                                                                  "another-date"])
def test_after_the_rules_a_trap_the_model_falls_for_stays_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, days: tuple[tuple[str, tuple[str, ...]], ...], q: str,
        entity: str, old: str, trap: str, guard: str) -> None:
    repo = history(tmp_path, *days)
    monkeypatch.setattr(learned, "MODE", "off")
    assert old in top(ask(repo, q, "2026-05-01"), entity)  # off: the rules keep the old line
    # The model alone is fooled: it puts the newer line of the same topic first (the relative's move no
    # longer, with the weights trained on thirteen sets in wave 15).
    monkeypatch.setattr(learned, "MODE", "replace")
    assert (trap in top(ask(repo, q, "2026-05-01"), entity)) == (guard != currency.SOMEONE_ELSE)
    # After the rules, the guard that names the trap refuses it, whatever the model's probability.
    monkeypatch.setattr(learned, "MODE", "after")
    monkeypatch.setattr(learned, "RECORD", [])
    results = ask(repo, q, "2026-05-01")
    assert old in top(results, entity) and nothing_hidden(results)
    assert learned.RECORD is not None and len(learned.RECORD) == 1
    scored = [(p, g) for b, _, p, g in learned.RECORD[0].others if trap in b]
    assert len(scored) == 1
    p, refused = scored[0]
    # The guard holds it where the model is past its threshold; with the weights trained on fourteen
    # sets (wave 16) the relative's move is not (and the guard still names it).
    assert guard in refused and (p >= learned_model.AFTER_THRESHOLD) == (guard != currency.SOMEONE_ELSE)


# Changes told by what is done, which no rule ties to the older line: an opinion reversed (wave 11),
# and (wave 14) a yes/no answer changed beside an older line that is no direct yes (a visa waited
# for, then used), which the model's own guard (learned.BESIDE_A_YES) must not hold back.
UPDATES = [
    ((("2026-01-12", ("W @Ines: Thinks podcasts are a waste of time.", "W @Ines: Works night shifts at a bakery.")),
      ("2026-04-03", ("W @Ines: Listens to three history podcasts a week on her commute and recommends them "
                      "to everyone.",))),
     "What does Ines think of podcasts?", "ines", "waste of time", "three history podcasts"),
    ((("2026-01-12", ("W @Oskar: Is waiting in Lima for his Canadian work visa.", "W @Oskar: Works as a welder.")),
      ("2026-04-03", ("W @Oskar: Flew into Halifax on Monday with the work visa; starts at the shipyard next week.",))),
     "Has Oskar got his work visa?", "oskar", "waiting in Lima", "Flew into Halifax"),
]


@pytest.mark.parametrize("days,q,entity,old,new", UPDATES, ids=["opinion-reversed", "visa-used"])
def test_after_the_rules_a_change_told_by_what_is_done_goes_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, days: tuple[tuple[str, tuple[str, ...]], ...], q: str,
        entity: str, old: str, new: str) -> None:
    repo = history(tmp_path, *days)
    monkeypatch.setattr(learned, "MODE", "off")
    assert old in top(ask(repo, q, "2026-05-01"), entity)  # the rules keep the old line
    monkeypatch.setattr(learned, "MODE", "after")
    results = ask(repo, q, "2026-05-01")
    assert new in top(results, entity)
    # Ranking only: the older line is still returned, unmarked.
    assert nothing_hidden(results) and any(old in r.content for r in results)
    # As of a day before the change, the model sees only what was recorded by then: the old line.
    assert old in top(ask(repo, q, "2026-03-01"), entity)
