"""Issue 13, wave 17: a ranking miss the walk-through of wave 16 found on issue 13's own story (a
move Porto -> Madrid, a tea opinion replaced by a coffee one): with history asked for, a replaced
statement ranked above the statement that replaced it. Now it ranks right under it
(`currency.settle`), by the supersession link alone, no word of the story. Real git repositories,
real index, lexical recall; the sentences of the second history are no bench set's."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_attribute_recency import ask
from test_current_truth_wave7 import history

from gitmem.recall.result import Result

# Issue 13's story as the walk-through retained it, a line a day.
STORY = (("2025-11-03", ("W @Alice: Moved to Porto on 2025-11-03.",)),
         ("2025-11-05", ("O(c=0.6) @Alice: Prefers tea over coffee.",)),
         ("2025-11-07", ("W @Alice: Works at @Globex as an engineer.",)),
         ("2025-11-10", ("W @Alice: Adopted a cat named Miso.",)),
         ("2025-11-27", ("W @Alice: Currently in Marrakech (Nov 27–Dec 1, 2025) for a conference.",)),
         ("2025-12-05", ("W @Alice: Moved from Porto to Madrid.",)),
         ("2025-12-06", ("O(c=0.8) @Alice: Prefers coffee now, no longer drinks tea.",)))
# The same shapes in other words: a move, then an opinion replaced, the newer one last.
OTHER = (("2026-02-02", ("W @Tomasz: Rents a flat in Gdansk near the shipyard.",)),
         ("2026-02-09", ("O(c=0.5) @Tomasz: Prefers the night train to flying.",)),
         ("2026-02-16", ("W @Tomasz: Plays bass in a ska band.",)),
         ("2026-04-20", ("W @Tomasz: Relocated from Gdansk to Wroclaw for the new lab.",)),
         ("2026-04-22", ("O(c=0.8) @Tomasz: Prefers flying now, no longer takes the night train.",)))


def contents(results: list[Result]) -> list[str]:
    return [str(r.content) for r in results]


def place(results: list[Result], words: str) -> int:
    return next(i for i, r in enumerate(results) if words in str(r.content))


@pytest.mark.parametrize(("days", "q", "old", "new", "day"), [
    (STORY, "Alice tea", "Prefers tea over coffee", "Prefers coffee now", "2025-12-08"),
    (STORY, "Alice Porto", "Moved to Porto on", "Moved from Porto to Madrid", "2025-12-08"),
    (OTHER, "Tomasz night train", "Prefers the night train to flying", "Prefers flying now", "2026-05-01"),
])
def test_with_history_a_replaced_statement_ranks_under_its_successor(
        tmp_path: Path, days: tuple[tuple[str, tuple[str, ...]], ...], q: str, old: str, new: str, day: str) -> None:
    repo: GitRepo = history(tmp_path, *days)
    shown = ask(repo, q, k=5, as_of=day, include_history=True)
    assert new in contents(shown)[0]
    replaced = shown[place(shown, old)]
    assert place(shown, old) == 1 and replaced.superseded_by is not None  # still shown, marked, right under it
    assert new not in str(replaced.content)
    # Without history the replaced one is left out and its successor answers.
    plain = ask(repo, q, k=5, as_of=day)
    assert new in contents(plain)[0] and not any(old in c for c in contents(plain))
    # Before the change the older statement is the answer, unmarked, with history or without.
    before = ask(repo, q, k=5, as_of=days[2][0], include_history=True)
    assert old in contents(before)[0] and before[0].superseded_by is None
