"""The judge's rules-first readings (`judge.ruled`, issue 15 "deterministic first"): what they decide
from the words alone, what they leave to the model, and a reflection with them switched on, on a real
git history with the REAL bundled SmolLM2 (which never decides on its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from click.testing import CliRunner

from gitmem.cli import cli
from gitmem.index.indexer import update
from gitmem.reflect import judge as J
from gitmem.reflect.run import RunOptions, reflect
from gitmem.workspace import Workspace
from gitrepo import GitRepo
from test_reflect_run import BRANCH
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


def _reflected(repo: GitRepo, model: Path | None) -> tuple[Workspace, dict]:
    """Reflect Dineo's logs: with the real SmolLM2 at `model`, or with no model (None)."""
    from gitmem.reflect.model import CachedModel, LlamaModel

    repo.commit("init", "2025-11-01", {"memory.md": "# Memory\n", ".gitignore": ".memory/\n"})
    repo.commit("log", "2025-11-20", {"memory/2025-11-20.md": LOG})
    repo.commit("log", "2025-11-27", {"memory/2025-11-27.md": LOG2})
    ws = Workspace.find(repo.path)
    update(ws)
    if model is None:
        return ws, reflect(ws, RunOptions())
    llm = CachedModel.for_workspace(LlamaModel(model), ws)
    return ws, reflect(ws, RunOptions(model=lambda: llm))


def _moved(res: dict) -> dict:
    [change] = [c for c in res["changes"] if "opinion" in c]
    return change


@pytest.mark.llm
def test_the_bundled_model_never_decides_yet_an_opinion_whose_thing_was_given_up_goes_down(repo: GitRepo, smollm2: Path) -> None:
    ws, res = _reflected(repo, smollm2)
    change = _moved(res)
    assert change["after"] < change["before"] == 0.7
    [ev] = change["evidence"]
    # The sale is the evidence, read the right way, and said to be the rules' verdict; the gig (a
    # drum word, no end) is not counted.
    assert ev["relation"] == "contradicts" and ev["content"].startswith("@Dineo: Sold her drum kit")
    assert ev["by"] == "rule: ends what the opinion likes ('sold drum')"
    # The review names who decided, beside the evidence text.
    out = CliRunner().invoke(cli, ["-C", str(repo.path), "review"]).output
    assert "contradicts (weak, -0.05, rule: ends what the opinion likes ('sold drum')): \"@Dineo: Sold her drum kit" in out
    # And the state file keeps it for the next review.
    assert '"by": "rule: ends what the opinion likes' in git_show(repo, "bank/.reflect.json")


@pytest.mark.llm
def test_with_the_rules_off_the_bundled_model_moves_nothing(repo: GitRepo, smollm2: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(J, "RULES_FIRST", False)
    _, res = _reflected(repo, smollm2)
    assert all(c["after"] == c["before"] for c in res["changes"] if "opinion" in c and c["evidence"])
    assert not [c for c in res["changes"] if "opinion" in c and c["evidence"]]


@pytest.mark.llm
def test_a_model_over_the_bar_moves_nothing_itself_but_the_rules_still_count(repo: GitRepo, smollm2: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.reflect.model import model_identity

    name = model_identity(smollm2)
    shipped = J.shipped_calibrations()[J.fingerprint(name)]
    sloppy = shipped._replace(method="labels", margin=0.0, wrong_direction=0.3, fresh_wrong_direction=None)
    monkeypatch.setattr(J, "shipped_calibrations", lambda: {sloppy.fingerprint: sloppy})
    _, res = _reflected(repo, smollm2)
    [note] = [n for n in res["notes"] if "opinion confidence not moved by the model" in n]
    assert "wrong direction 30%" in note and "only the rules' verdicts move it" in note
    [ev] = _moved(res)["evidence"]
    assert ev["relation"] == "contradicts" and ev["by"].startswith("rule: ")


def test_without_a_model_the_rules_alone_lower_the_opinion(repo: GitRepo) -> None:
    _, res = _reflected(repo, None)
    change = _moved(res)
    assert change["after"] == 0.65 and change["before"] == 0.7
    [ev] = change["evidence"]
    assert ev["relation"] == "contradicts" and "Sold her drum kit" in ev["content"]
    assert "- O(c=0.65) @Dineo: Enjoys playing the drums." in git_show(repo, "bank/opinions.md")


def git_show(repo: GitRepo, path: str) -> str:
    return repo.git("show", f"{BRANCH}:{path}")
