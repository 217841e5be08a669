"""Issue 16's time words read as a window where wave 18 read none (a season, a date without a year,
"on the 3rd", a fixed-day holiday), and issue 13's "what held then" where a question names a past
window: the statement that held in it answers, marked superseded, ahead of its heir from after the
window. A workspace made with `gitmem init` and `gitmem retain` through the CLI, one dated commit
a day over 2025 (pinned dates); lexical recall's JSON."""

from __future__ import annotations

from typing import Any

import pytest

from gitrepo import GitRepo
from test_time_window_recency import days, top, written

# Names-only lines for most: "Alice" is in every one, so the question's words score them alike.
LINES = [
    ("2025-02-10", "W @Alice: Started a pottery class."),
    ("2025-04-12", "W @Alice: Ran a half marathon."),
    ("2025-07-14", "W @Alice: Went hiking in the Alps."),
    ("2025-08-03", "W @Alice: Spent a week sailing in Greece."),
    ("2025-09-20", "W @Alice: Joined a book club."),
    ("2025-11-03", "W @Alice: Lives in Porto."),
    ("2025-11-07", "W @Alice: Works at @Globex as an engineer."),
    ("2025-11-15", "W @Alice: Visited the wine cellars."),
    ("2025-11-22", "W @Alice: Hosted a dinner for friends."),
    ("2025-12-03", "W @Alice: Bought a new bike."),
    ("2025-12-05", "W @Alice: Moved from Porto to Madrid; now lives in Madrid."),
    ("2025-12-10", "W @Alice: Started learning Spanish."),
    ("2025-12-14", "W @Alice: Cooked dinner for the neighbours."),
]


@pytest.fixture
def alice(repo: GitRepo) -> GitRepo:
    return written(repo, LINES)


def contents(results: list[dict[str, Any]]) -> list[str]:
    return [r["content"] for r in results]


def test_a_season_is_read_as_its_months(alice: GitRepo) -> None:
    # On 7b312dc "the summer" named no window: the newest lines (12-14, 12-10) came first.
    got = top(alice, "what did Alice do in the summer", "2025-12-20", k=2)
    assert days(got) == ["2025-08-03", "2025-07-14"], got
    assert contents(got)[0] == "@Alice: Spent a week sailing in Greece."
    # "this spring" as of December: March-May 2025.
    got = top(alice, "what did Alice do this spring", "2025-12-20", k=1)
    assert contents(got) == ["@Alice: Ran a half marathon."], got


def test_a_day_without_a_year_is_the_latest_such_day_before_the_as_of_point(alice: GitRepo) -> None:
    # "on 3 Dec" as of 12-20 is 2025-12-03 (7b312dc: no window, 12-14 first).
    got = top(alice, "what did Alice do on 3 Dec", "2025-12-20", k=1)
    assert contents(got) == ["@Alice: Bought a new bike."], got
    # "on the 3rd" as of 12-20 is Dec 3; as of Nov 20 it is Nov 3 (the as-of point, never today).
    got = top(alice, "what did Alice do on the 3rd", "2025-12-20", k=1)
    assert contents(got) == ["@Alice: Bought a new bike."], got
    got = top(alice, "what did Alice do on the 3rd", "2025-11-20", k=1)
    assert contents(got) == ["@Alice: Lives in Porto."], got
    assert all(d <= "2025-11-20" for d in days(top(alice, "what did Alice do on the 3rd", "2025-11-20")))


def test_a_question_about_a_past_window_answers_with_what_held_then(alice: GitRepo) -> None:
    # On 7b312dc: the Madrid move first, lifted by the Porto line's window-boosted score, Porto hidden.
    got = top(alice, "where did Alice live in November", "2025-12-20", k=2)
    assert contents(got) == ["@Alice: Lives in Porto.", "@Alice: Moved from Porto to Madrid; now lives in Madrid."], got
    held = got[0]["superseded_by"]
    assert held is not None and held["source"].startswith("memory/2025-12-05.md"), got[0]
    assert got[1].get("superseded_by") is None


def test_without_a_window_the_current_statement_answers(alice: GitRepo) -> None:
    got = top(alice, "where does Alice live", "2025-12-20", k=2)
    assert contents(got)[0] == "@Alice: Moved from Porto to Madrid; now lives in Madrid.", got
    assert "@Alice: Lives in Porto." not in contents(got)
    # A window the heir is inside too ("this year") asks for now: the heir answers, Porto hidden.
    got = top(alice, "where did Alice live this year", "2025-12-20", k=2)
    assert contents(got)[0] == "@Alice: Moved from Porto to Madrid; now lives in Madrid.", got
    assert "@Alice: Lives in Porto." not in contents(got)


def test_as_of_before_the_move_knows_no_heir(alice: GitRepo) -> None:
    # As of Nov 30 the move is not in memory: Porto answers, not marked.
    got = top(alice, "where did Alice live in November", "2025-11-30", k=1)
    assert contents(got) == ["@Alice: Lives in Porto."], got
    assert got[0].get("superseded_by") is None


# Porto written in June, long before the window: it still held all November, since the move came
# after it. A chain of homes (Lyon, then Porto, then Madrid): November is Porto's, never Lyon's.
HOMES = [
    ("2024-03-02", "W @Alice: Lives in Lyon."),
    ("2025-06-14", "W @Alice: Lives in Porto now."),
    ("2025-07-20", "W @Alice: Went hiking in the Alps."),
    ("2025-12-05", "W @Alice: Moved from Porto to Madrid; now lives in Madrid."),
    ("2025-12-10", "W @Alice: Started learning Spanish."),
]


@pytest.fixture
def homes(repo: GitRepo) -> GitRepo:
    return written(repo, HOMES)


def test_a_line_written_before_the_window_that_held_through_it_answers_for_it(homes: GitRepo) -> None:
    # On 17d6668 only a line dated inside the window was kept: the Madrid move answered November.
    got = top(homes, "where did Alice live in November", "2025-12-20", k=2)
    assert contents(got)[0] == "@Alice: Lives in Porto now.", got
    held = got[0]["superseded_by"]
    assert held is not None and held["source"].startswith("memory/2025-12-05.md"), got[0]
    assert "@Alice: Lives in Lyon." not in contents(got)
    # Lyon's own heir (June) came before November: it did not hold then and stays hidden.
    got = top(homes, "where did Alice live in November", "2025-12-20", k=4)
    assert "@Alice: Lives in Lyon." not in contents(got), got
    # A window before the move to Porto is Lyon's.
    got = top(homes, "where did Alice live in March", "2025-12-20", k=1)
    assert contents(got) == ["@Alice: Lives in Lyon."], got
    # Without a window the current home answers and neither older one shows.
    got = top(homes, "where does Alice live", "2025-12-20", k=3)
    assert contents(got)[0] == "@Alice: Moved from Porto to Madrid; now lives in Madrid.", got
    assert not {"@Alice: Lives in Lyon.", "@Alice: Lives in Porto now."} & set(contents(got))
