"""Issue 16's time words where they meet issue 13's recency: a question that names a time is
not asking for the newest fact. On a workspace made with `gitmem init` and `gitmem retain` (one
log a day, Oct-Dec 2025, pinned commit dates), a question's time window decides which side of it
a line stands on, and recency (currency.newer_first, the learned pair model) orders lines only
within each side; a question without time words still gets the newest line first."""

from __future__ import annotations

from typing import Any

import pytest

from gitrepo import GitRepo
from test_walkthrough_w16 import as_json, retain, workspace

# Names-only lines: "Peter" is in every one, so the question's words score them all alike and
# every pair is a close call for recency.
LINES = [
    ("2025-10-04", "W @Peter: Started a pottery class on Saturdays."),
    ("2025-10-28", "W @Peter: Packed boxes before the move to Porto."),
    ("2025-11-03", "W @Peter: Moved to Porto on 2025-11-03."),
    ("2025-11-07", "W @Peter: Ran the Porto half marathon."),
    ("2025-11-14", "W @Peter: Fixed the Castle's backup disk."),
    ("2025-11-21", "W @Peter: Visited @Andy in Braga for his birthday."),
    ("2025-11-27", "W @Peter: Finished the pottery course with a blue vase."),
    ("2025-12-02", "W @Peter: Bought a new bike for commuting."),
    ("2025-12-04", "W @Peter: Started learning Spanish."),
    ("2025-12-08", "W @Peter: Cooked dinner for the neighbours."),
    ("2025-12-10", "W @Peter: Joined a climbing gym in Porto."),
    ("2025-12-12", "W @Peter: Went to a jazz concert."),
]


def written(repo: GitRepo, lines: list[tuple[str, str]]) -> GitRepo:
    """A workspace made with `gitmem init`, then one `gitmem retain` a line, committed on its day."""
    workspace(repo)
    for day, bullet in lines:
        retain(repo, day, bullet)
    return repo


@pytest.fixture
def peter(repo: GitRepo) -> GitRepo:
    return written(repo, LINES)


def top(repo: GitRepo, question: str, as_of: str, k: int = 4) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = as_json(repo, "recall", question, "--as-of", as_of, "--no-semantic", "-k", str(k))["results"]
    return got


def days(results: list[dict[str, Any]]) -> list[str]:
    return [r["source"].split("/")[1][:10] for r in results]


def test_a_month_asked_in_december_answers_with_that_months_lines_newest_first(peter: GitRepo) -> None:
    # On 141d1aa: the four December lines (12-12, 12-10, 12-08, 12-04), recency undoing the window.
    got = top(peter, "what did Peter do in November", "2025-12-15")
    assert days(got) == ["2025-11-27", "2025-11-21", "2025-11-14", "2025-11-07"], got
    assert got[0]["content"] == "@Peter: Finished the pottery course with a blue vase."
    got = top(peter, "what did Peter do in October", "2025-12-15", k=2)
    assert [r["content"] for r in got] == ["@Peter: Packed boxes before the move to Porto.",
                                           "@Peter: Started a pottery class on Saturdays."], got


def test_last_week_is_counted_from_the_as_of_day_and_wins_over_a_newer_line(peter: GitRepo) -> None:
    # As of Wednesday 2025-12-03, "last week" is Nov 24-30: the 11-27 line, not the newer 12-02 one
    # (141d1aa put the bike first).
    got = top(peter, "what did Peter do last week", "2025-12-03", k=2)
    assert got[0]["content"] == "@Peter: Finished the pottery course with a blue vase.", got
    assert days(got) == ["2025-11-27", "2025-12-02"], got


def test_as_of_is_respected_inside_the_window(peter: GitRepo) -> None:
    # As of Nov 20 the later November lines are not in memory yet: the newest November line known then first.
    got = top(peter, "what did Peter do in November", "2025-11-20")
    assert days(got)[:3] == ["2025-11-14", "2025-11-07", "2025-11-03"], got
    assert all(d <= "2025-11-20" for d in days(got)), got


def test_without_time_words_the_newest_line_comes_first(peter: GitRepo) -> None:
    got = top(peter, "what did Peter do", "2025-12-15")
    assert days(got) == ["2025-12-12", "2025-12-10", "2025-12-08", "2025-12-04"], got
    assert got[0]["content"] == "@Peter: Went to a jazz concert."
