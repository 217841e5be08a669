"""The judge's rules-first readings (`judge.ruled`, issue 15 "deterministic first"): what they decide
from the words alone, what they leave to the model, and a reflection with them switched on, on a real
git history with the REAL bundled SmolLM2 (which never decides on its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.index.indexer import update
from gitmem.reflect import judge as J
from gitmem.reflect.run import RunOptions, reflect
from gitmem.workspace import Workspace
from gitrepo import GitRepo
import test_judge_llm

smollm2 = test_judge_llm.bundled  # a fixture by this name: the real SmolLM2's path, or a skip


def test_an_end_of_the_liked_thing_contradicts_and_an_aversion_turns_it() -> None:
    r = J.ruled("@Dineo: Sold her drum kit; says she lost interest.", "@Dineo: Enjoys playing the drums.")
    assert r is not None and r.relation == "contradicts" and "'sold drum'" in r.rule
    r = J.ruled("@Ulan: Gave up judo after a shoulder injury.", "@Ulan: Loves judo.")
    assert r is not None and r.relation == "contradicts"
    # "No longer" ends the stance itself.
    r = J.ruled("@Ulan: No longer enjoys judo since the injury.", "@Ulan: Enjoys judo.")
    assert r is not None and r.relation == "contradicts"
    # An aversion is read in its affirmative form ("Likes smoking"): quitting it agrees.
    r = J.ruled("@Bo: Quit smoking in May.", "@Bo: Dislikes smoking.")
    assert r is not None and r.relation == "supports"


def test_an_end_of_something_else_or_a_denied_added_planned_or_alien_end_decides_nothing() -> None:
    # Of a comparison only the liked thing counts: selling the guitar ends the one liked less.
    assert J.ruled("@Xoan: Sold his guitar to buy a better gaita.", "@Xoan: Prefers the gaita to the guitar.") is None
    r = J.ruled("@Jarkko: Sold the charcoal kettle and cooks on gas.", "@Jarkko: Prefers charcoal barbecues to gas.")
    assert r is not None and r.relation == "contradicts"
    assert J.ruled("@Ana: Never gave up running, even after the surgery.", "@Ana: Enjoys running.") is None
    assert J.ruled("@Ana: Still has not stopped running on Sundays.", "@Ana: Enjoys running.") is None
    assert J.ruled("@Ana: Plans to give up running next year.", "@Ana: Enjoys running.") is None
    assert J.ruled("@Ana: Her sister @Eva gave up running.", "@Ana: Enjoys running.") is None
    # The end governs the words right after it, not the rest of the sentence.
    assert J.ruled("@Ana: Cancelled the gym and goes running instead.", "@Ana: Enjoys running.") is None
    # An evaluation is left to the model: ending its thing may agree ("a waste of time").
    assert J.ruled("@Ana: Quit social media in March.", "@Ana: Thinks social media is a waste of time.") is None


def test_a_fact_that_restates_the_opinion_supports_it_unless_it_negates_or_ends_it() -> None:
    r = J.ruled("@Peter: Prefers concise replies, he said again at lunch.", "@Peter: Prefers concise replies.")
    assert r is not None and r.relation == "supports" and r.rule == "rule: restates the opinion"
    r = J.ruled("@Peter: Said he no longer prefers concise replies.", "@Peter: Prefers concise replies.")
    assert r is not None and r.relation == "contradicts"  # the words restated, with an end of them
    assert J.ruled("@Peter: Does not say he prefers concise replies.", "@Peter: Prefers concise replies.") is None



LOG = """# 2025-11-20

## Retain
- O(c=0.70) @Dineo: Enjoys playing the drums.
"""
LOG2 = """# 2025-11-27

## Retain
- W @Dineo: Sold her drum kit; says she lost interest and the neighbours are relieved.
- W @Dineo: Took the night bus to a drum and bass gig with her cousin.
"""


def _reflected(repo: GitRepo, smollm2: Path) -> dict:
    from gitmem.reflect.model import CachedModel, LlamaModel

    repo.commit("init", "2025-11-01", {"memory.md": "# Memory\n", ".gitignore": ".memory/\n"})
    repo.commit("log", "2025-11-20", {"memory/2025-11-20.md": LOG})
    repo.commit("log", "2025-11-27", {"memory/2025-11-27.md": LOG2})
    ws = Workspace.find(repo.path)
    update(ws)
    model = CachedModel.for_workspace(LlamaModel(smollm2), ws)
    return reflect(ws, RunOptions(model=lambda: model))


@pytest.mark.llm
def test_with_rules_first_the_bundled_model_lowers_an_opinion_whose_thing_was_given_up(
        repo: GitRepo, smollm2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(J, "RULES_FIRST", True)
    res = _reflected(repo, smollm2)
    [change] = [c for c in res["changes"] if "opinion" in c]
    assert change["after"] < change["before"] == 0.7
    [ev] = change["evidence"]
    # The sale is the evidence, read the right way; the gig (a drum word, no end) is not counted.
    assert ev["relation"] == "contradicts" and "Sold her drum kit" in ev["source"] + ev.get("content", "")


@pytest.mark.llm
def test_without_rules_first_the_bundled_model_moves_nothing(repo: GitRepo, smollm2: Path) -> None:
    assert not J.RULES_FIRST  # off as shipped
    res = _reflected(repo, smollm2)
    assert not [c for c in res["changes"] if "opinion" in c and c["after"] != c["before"]]
