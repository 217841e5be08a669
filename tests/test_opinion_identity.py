"""An opinion's identity across edits and curation (issue 13): the user's own confidence edit in a
daily log, reflection curating it into bank/opinions.md, and `changes` / `why` / `opinions
--history` following it through all of that, on a real repository."""

from __future__ import annotations

import json

from click.testing import CliRunner

from gitmem.cli import cli
from gitmem.index.indexer import update
from gitmem.reflect import review
from gitmem.reflect.run import RunOptions, reflect
from gitmem.workspace import Workspace
from gitrepo import GitRepo
from test_reflect_run import FakeModel, calibrate

LOG = ("# 2025-11-05\n\nPeter said short replies work best.\n\n## Retain\n"
       "- O(c={c}) @Peter: Prefers concise replies on WhatsApp.\n- W @Peter: Lives in Berlin.\n")


def run(repo: GitRepo, *args: str) -> str:
    r = CliRunner().invoke(cli, ["-C", str(repo.path), *args])
    assert r.exit_code == 0, r.output
    return r.output


def build(repo: GitRepo) -> Workspace:
    repo.commit("init", "2025-11-01", {"memory.md": "# Memory\n\n- @Peter is the human I work for.\n",
                                       ".gitignore": ".memory/\n"})
    repo.commit("log", "2025-11-05", {"memory/2025-11-05.md": LOG.format(c="0.7")})
    repo.commit("user: I am less sure", "2025-11-08", {"memory/2025-11-05.md": LOG.format(c="0.2")})
    ws = Workspace.find(repo.path)
    update(ws)
    calibrate(ws)
    return ws


def opinion(repo: GitRepo) -> dict:  # type: ignore[type-arg]
    [op] = json.loads(run(repo, "opinions", "--history", "--json"))["opinions"]
    return op  # type: ignore[no-any-return]


def test_confidence_edit_reads_as_a_move_in_changes_and_why(repo: GitRepo) -> None:
    build(repo)
    out = run(repo, "changes", "--since", "2025-11-07")
    assert "changed  c 0.70 → 0.20  @Peter: Prefers concise replies on WhatsApp." in out
    assert "was:" not in out  # the same words are not printed twice
    why = run(repo, "why", "Prefers concise replies on WhatsApp")
    assert "c 0.70 → 0.20" in why and why.index("2025-11-05") < why.index("c 0.70 → 0.20")
    # A changed wording still shows what it was, and no arrow when the confidence stayed.
    repo.commit("reword", "2025-11-09", {"memory/2025-11-05.md": LOG.format(c="0.2").replace("on WhatsApp", "in chats")})
    out = run(repo, "changes", "--since", "2025-11-09")
    assert "changed  @Peter: Prefers concise replies in chats." in out
    assert "was: @Peter: Prefers concise replies on WhatsApp." in out


def test_opinion_history_follows_the_statement_into_the_bank_and_back(repo: GitRepo) -> None:
    ws = build(repo)
    quiet = FakeModel(verdict={"relation": "unrelated", "strength": "weak"})
    op = opinion(repo)
    assert [(h["confidence"], h["source"].split("#")[0]) for h in op["history"]] == [
        (0.7, "memory/2025-11-05.md"), (0.2, "memory/2025-11-05.md")]

    reflect(ws, RunOptions(model=lambda: quiet))
    review.merge(ws)
    op = opinion(repo)  # curated: the bank line is the opinion now, the user's edit is still its past
    assert op["source"].startswith("bank/opinions.md#") and op["confidence"] == 0.2
    assert [(h["confidence"], h["source"].split("#")[0]) for h in op["history"]] == [
        (0.7, "memory/2025-11-05.md"), (0.2, "memory/2025-11-05.md"), (0.2, "bank/opinions.md")]
    text = run(repo, "opinions", "--history")
    assert text.index("c=0.70 memory/2025-11-05.md") < text.index("c=0.20 memory/2025-11-05.md") \
        < text.index("c=0.20 bank/opinions.md")

    # Back: the user edits the log line again; it is the newest word on the opinion until the
    # next reflection restates it in the bank.
    repo.commit("user: more sure again", "2025-11-20", {"memory/2025-11-05.md": LOG.format(c="0.5")})
    update(ws)
    op = opinion(repo)
    assert op["source"].startswith("memory/2025-11-05.md#") and op["confidence"] == 0.5
    assert [h["confidence"] for h in op["history"]] == [0.7, 0.2, 0.2, 0.5]
    reflect(ws, RunOptions(model=lambda: quiet))
    review.merge(ws)
    op = opinion(repo)
    assert op["source"].startswith("bank/opinions.md#") and op["confidence"] == 0.5
    assert [(h["confidence"], h["source"].split("#")[0]) for h in op["history"]] == [
        (0.7, "memory/2025-11-05.md"), (0.2, "memory/2025-11-05.md"), (0.2, "bank/opinions.md"),
        (0.5, "memory/2025-11-05.md"), (0.5, "bank/opinions.md")]
    assert [(r["confidence"], r["reason"]) for r in op["reflections"]] == [(0.2, "stated"), (0.5, "restated in memory")]
    assert "c 0.20 → 0.50" in run(repo, "changes", "--since", "2025-11-10")
