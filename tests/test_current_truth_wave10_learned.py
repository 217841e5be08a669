"""Issue 13, wave 10: the learned pair model in currency (gitmem/recall/learned.py), trained offline
by bench/truth_learn.py and shipped as weights (gitmem/recall/learned_model.py). It ships in "after" since wave 16
(the rules first, then the guarded model); in "replace" it takes newer_first's place. Real git repositories, real index,
the shipped weights. The sentences are not any bench set's: each change is told in words the rules
do not tie to the older line (a car gone to the scrapyard, an opinion reversed by what is done, a
grading passed), and the trap the model keeps is a stay that answers nothing about a home."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_current_truth_wave7 import history, nothing_hidden

from gitmem.recall import learned, learned_model
from gitmem.recall.result import Result
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace
from gitrepo import GitRepo

CHANGES = [
    ((("2026-01-12", ("W @Bertil: Drives a red Volvo estate he bought second-hand.",
                      "W @Bertil: Referees youth hockey matches.")),
      ("2026-04-03", ("W @Bertil: The Volvo went to a scrapyard in Umea; he takes the bus to the rink now.",))),
     "What car does Bertil drive?", "bertil", "Drives a red Volvo", "scrapyard in Umea"),
    ((("2026-01-12", ("W @Ines: Thinks podcasts are a waste of time.", "W @Ines: Works night shifts at a bakery.")),
      ("2026-04-03", ("W @Ines: Listens to three history podcasts a week on her commute and recommends them "
                      "to everyone.",))),
     "What does Ines think of podcasts?", "ines", "waste of time", "three history podcasts"),
    ((("2026-01-12", ("W @Kofi: Has a brown belt in judo.", "W @Kofi: Runs a phone repair stall.")),
      ("2026-04-03", ("W @Kofi: Passed his black belt grading in Kumasi after six years on the mat.",))),
     "What belt does Kofi hold in judo?", "kofi", "brown belt", "black belt grading"),
]


def ask(repo: GitRepo, q: str, as_of: str) -> list[Result]:
    with Session(Workspace(repo.path)) as s:
        return s.search(q, Options(k=10, as_of=as_of)).results


def top(results: list[Result], entity: str) -> str:
    return next(str(r.content) for r in results if entity in r.entities)


def test_the_learned_model_ships_after_the_rules_and_fits_its_features() -> None:
    assert learned.MODE == "after"  # since wave 16 (tests/test_current_truth_wave16_guarded.py)
    # The weights were written for the features this code computes: one weight, mean and scale each.
    n = len(learned_model.WEIGHTS)
    assert n > 0 and len(learned_model.MEAN) == n == len(learned_model.SCALE)
    assert 0.0 < learned_model.THRESHOLD < 1.0


@pytest.mark.parametrize("days,q,entity,old,new", CHANGES, ids=["car-ended", "opinion-reversed", "belt-passed"])
def test_switched_on_a_change_in_new_words_goes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       days: tuple[tuple[str, tuple[str, ...]], ...], q: str,
                                                       entity: str, old: str, new: str) -> None:
    repo = history(tmp_path, *days)
    # Off: the rules keep the older line first; nothing ties the new words to it.
    monkeypatch.setattr(learned, "MODE", "off")
    assert old in top(ask(repo, q, "2026-05-01"), entity)
    monkeypatch.setattr(learned, "MODE", "replace")
    results = ask(repo, q, "2026-05-01")
    assert new in top(results, entity)
    # Ranking only: the older line is still returned, unmarked.
    assert nothing_hidden(results) and any(old in r.content for r in results)
    # As of a day before the change, the model sees only what was recorded by then: the old line.
    assert old in top(ask(repo, q, "2026-03-01"), entity)


def test_switched_on_a_stay_elsewhere_does_not_pass_a_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = history(
        tmp_path,
        ("2026-01-12", ("W @Rania: Lives in a flat in Amman with her sister.", "W @Rania: Works as a translator.")),
        ("2026-04-03", ("W @Rania: Spent the weekend at a spa hotel by the Dead Sea.",)),
    )
    monkeypatch.setattr(learned, "MODE", "replace")
    assert "flat in Amman" in top(ask(repo, "Where does Rania live?", "2026-05-01"), "rania")


def test_the_bench_hook_records_what_the_model_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    days, q, entity, old, new = CHANGES[0]
    repo = history(tmp_path, *days)
    monkeypatch.setattr(learned, "RECORD", [])
    results = ask(repo, q, "2026-05-01")
    assert old in top(results, entity)  # recording alone moves nothing (the model is off)
    assert learned.RECORD is not None and len(learned.RECORD) == 1
    rec = learned.RECORD[0]
    assert old in rec.top
    scored = [(b, x, p) for b, x, p, _ in rec.others if new in b]
    assert len(scored) == 1
    _, x, p = scored[0]
    assert len(x) == len(learned_model.WEIGHTS)
    assert p == learned.probability(x, learned_model) and p >= learned_model.THRESHOLD
    # A line on another thing, recorded after the first the same day, is scored too and stays below.
    hockey = [p for b, _, p, _ in rec.others if "hockey" in b]
    assert len(hockey) == 1 and hockey[0] < learned_model.THRESHOLD
