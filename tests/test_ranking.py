"""Ranking behaviours recall relies on (measured in bench/recall.py), pinned on small real repos."""

from __future__ import annotations

import pytest

from gitmem.recall.query import build
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace
from gitrepo import GitRepo


def ask(repo: GitRepo, question: str, **kw: object) -> list[str]:
    with Session(Workspace(repo.path)) as s:
        return [r["content"] for r in s.search(question, Options(**kw)).results]  # type: ignore[arg-type]


def test_natural_language_question_with_stopwords_finds_the_fact(repo: GitRepo) -> None:
    repo.commit("day", date="2025-11-03", files={"memory/2025-11-03.md": (
        "# 2025-11-03\n\n"
        "- Talked about the weather and what to cook tonight.\n"
        "- We decided the backup job runs nightly at 02:00 on the NAS.\n"
        "- What a day: so much to do and so little time.\n"
    )})
    got = ask(repo, "What did we decide about the backups?", k=3)
    assert got[0] == "We decided the backup job runs nightly at 02:00 on the NAS."


def test_entity_fact_comes_first(repo: GitRepo) -> None:
    repo.commit("day", date="2025-11-03", files={"memory/2025-11-03.md": (
        "# 2025-11-03\n\n"
        "## Retain\n"
        "- W: Coffee order for the team offsite: oat milk coffee, coffee beans from Lisbon.\n"
        "- O(c=0.8) @Peter: Prefers his coffee black.\n"
    )})
    got = ask(repo, "how does Peter take his coffee?", k=2)
    assert got[0] == "@Peter: Prefers his coffee black."


def test_the_line_after_a_matching_line_beats_an_unrelated_one(repo: GitRepo) -> None:
    # The answer ("last Friday") shares only the speaker's name with the question; it must win
    # over another line with the same single match because its neighbour matches the question.
    repo.commit("s1", date="2025-11-03", files={"memory/2025-11-03.md": (
        "# 2025-11-03\n\n"
        "- Bob: Movie night.\n"
        "- Alice: Sounds fun.\n"
    )})
    repo.commit("s2", date="2025-11-10", files={"memory/2025-11-10.md": (
        "# 2025-11-10\n\n"
        "- Alice: Did you go to the pottery class?\n"
        "- Bob: Yes, last Friday. It was great.\n"
    )})
    got = ask(repo, "When did Bob go to the pottery class?", k=3)
    assert got[:2] == ["Alice: Did you go to the pottery class?", "Bob: Yes, last Friday. It was great."]


def test_a_chunk_answering_every_term_beats_one_rare_term(repo: GitRepo) -> None:
    # "Lisbon" is rare, "flight" and "hotel" are common: bm25 alone prefers the lone rare match;
    # the line with both of the other terms answers more of the question.
    # (Blank lines keep the lines apart so neighbour smoothing stays out of it.)
    filler = "".join(f"- Flight {i} booked.\n\n\n\n- Hotel {i} booked.\n\n\n\n" for i in range(3))
    filler += "".join(f"- Note {i} written.\n\n\n\n" for i in range(10))
    repo.commit("day", date="2025-11-03", files={"memory/2025-11-03.md": (
        "# 2025-11-03\n\n" + filler + "- Flight and hotel confirmed.\n\n\n\n- Lisbon.\n"
    )})
    got = ask(repo, "flight hotel Lisbon", k=2)
    assert got[0] == "Flight and hotel confirmed."


@pytest.mark.parametrize("question", [
    'what about "quotes" AND NEAR(x, y) -foo: bar* ^baz (paren',
    "C++ vs. C#: which one? {braces} [brackets] col:umn",
    "' OR 1=1; --",
    "???",
    "@Peter's",
])
def test_fts_special_characters_in_a_question_do_not_error(repo: GitRepo, question: str) -> None:
    repo.commit("day", date="2025-11-03", files={"memory/2025-11-03.md": "# 2025-11-03\n\n- @Peter likes C++ and quotes.\n"})
    got = ask(repo, question, k=5)
    assert isinstance(got, list)


def test_one_letter_parts_are_not_query_terms() -> None:
    assert build("Caroline's dog").fts == '"caroline" OR "dog"'
    assert build("what is C?").fts == '"c"'  # nothing else to search: keep it
    assert build("The-Castle gateway").fts == '"castle" OR "gateway"'  # "the" is a stopword inside a name too


def test_a_question_of_stopwords_only_still_searches() -> None:
    q = build("what is it?")
    assert not q.empty
