"""Issue 13 walked as a new user would (wave 17): an opinion curated into bank/opinions.md is one
answer that cites the log line it came from, with that line's day, lists the bank/ copy, and
carries the confidence reflection curated; on real repositories made with `gitmem init` and
`gitmem retain`, reflected with a fake judge (test_reflect_run.FakeModel) and merged."""

from __future__ import annotations

from gitmem.reflect.run import RunOptions, reflect
from gitmem.workspace import Workspace
from gitrepo import GitRepo
from test_reflect_run import FakeModel, calibrate
from test_walkthrough_w16 import as_json, run

CONCISE = "O(c=0.8) @Peter: Prefers concise replies on WhatsApp."
INLINE = "W @Peter: Asked for the full migration plan inline on WhatsApp and read all of it."


def curated(repo: GitRepo, merge: bool = True) -> GitRepo:
    """Peter's opinion (Nov 5), a fact against it (Nov 6), a reflection whose judge moves the
    opinion down, merged on Dec 2 (`merge`)."""
    run(repo, "init", "--no-hooks", str(repo.path))
    repo.commit("workspace", "2025-11-01")
    run(repo, "retain", CONCISE, "--date", "2025-11-05", date="2025-11-05")
    run(repo, "retain", INLINE, "--date", "2025-11-06", date="2025-11-06")
    run(repo, "index")
    ws = Workspace.find(repo.path)
    calibrate(ws)
    assert reflect(ws, RunOptions(model=lambda: FakeModel()))["status"] == "written"
    if merge:
        run(repo, "review", "--merge", date="2026-12-02")
    return repo


def test_a_curated_opinion_cites_its_log_line_with_its_day_and_reflections_confidence(repo: GitRepo) -> None:
    curated(repo)
    bank = (repo.path / "bank/opinions.md").read_text()
    [line] = [ln for ln in bank.splitlines() if ln.startswith("- O(c=") and "Prefers concise replies" in ln]
    moved = float(line.split("(c=")[1].split(")")[0])
    assert moved < 0.8  # the judge took the inline plan as against it

    [top] = as_json(repo, "recall", "what does Peter prefer?", "-k", "1")["results"]
    assert top["content"] == "@Peter: Prefers concise replies on WhatsApp."
    # The original statement, its day, its bank/ copy listed; reflection's confidence kept.
    assert top["source"].startswith("memory/2025-11-05.md#L")
    assert top["timestamp"] == "2025-11-05"
    assert any(c.startswith("bank/opinions.md#L") for c in top["copies"]), top["copies"]
    assert top["confidence"] == moved
    text = run(repo, "recall", "what does Peter prefer?", "-k", "1")
    assert f"[opinion c={moved:.2f}] @Peter: Prefers concise replies on WhatsApp. (memory/2025-11-05.md#L4@" in text, text
    assert "bank/opinions.md#L" in text.split("[also in ", 1)[1] and "2026-12-02" not in text, text

    # `why` of the answer shows the statement's versions through its curation, with the move.
    why = as_json(repo, "why", "Prefers concise replies on WhatsApp")
    assert [(v["confidence"], v["source"].split("#")[0]) for v in why["versions"]] == [
        (0.8, "memory/2025-11-05.md"), (moved, "bank/opinions.md")]


def test_the_users_edit_after_curation_still_wins_and_a_new_curation_follows_it(repo: GitRepo) -> None:
    curated(repo)
    log = repo.path / "memory/2025-11-05.md"
    log.write_text(log.read_text().replace("O(c=0.8)", "O(c=0.3)"))
    repo.commit("user: less sure", "2026-12-03")
    [top] = as_json(repo, "recall", "what does Peter prefer?", "-k", "1")["results"]
    assert top["source"].startswith("memory/2025-11-05.md#L") and top["confidence"] == 0.3
    assert top["timestamp"] == "2025-11-05"
    assert any(c.startswith("bank/opinions.md#L") for c in top["copies"]), top["copies"]


def test_the_confidence_chart_starts_on_the_day_the_opinion_was_stated(repo: GitRepo) -> None:
    curated(repo, merge=False)
    run(repo, "review", "--html", ".memory/review.html")
    page = (repo.path / ".memory/review.html").read_text()
    # Stated on Nov 5 at 0.80 (the reflection reads memory through Nov 6), moved to 0.70 on Nov 6.
    assert "<title>2025-11-05: 0.80</title>" in page and "<title>2025-11-06: 0.70</title>" in page, page
    run(repo, "review", "--merge", date="2026-12-02")
    [op] = as_json(repo, "opinions", "--history")["opinions"]
    assert [(r["at"], r["confidence"], r["reason"]) for r in op["reflections"]] == [
        ("2025-11-05", 0.8, "stated"), ("2025-11-06", 0.7, "1 new evidence")]
