"""Ranking behaviours recall relies on (measured in bench/recall.py), pinned on small real repos."""

from __future__ import annotations

import pytest

from gitmem.recall.query import build
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace
from gitrepo import GitRepo


def ask(repo: GitRepo, question: str, **kw: object) -> list[str]:
    with Session(Workspace(repo.path)) as s:
        return [r.content for r in s.search(question, Options(**kw)).results]  # type: ignore[arg-type]


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


@pytest.mark.parametrize("scored_rows", [5000, 3, 1])
def test_as_of_search_for_a_word_is_exactly_that_times_matching_memory(repo: GitRepo, monkeypatch: pytest.MonkeyPatch,
                                                                        scored_rows: int) -> None:
    # The FTS-first path (rank in FTS5, filter after, id bound for as-of) and its bounded-cost
    # plans (rarest terms only, newest matches only) must never leak a later version nor lose one
    # that was current: with every matching chunk fitting in k, the answer is the exact set.
    from gitmem.index import store
    from gitmem.recall import rank

    monkeypatch.setattr(store, "SCORED_ROWS", scored_rows)
    monkeypatch.setattr(rank, "MIN_CANDIDATES", 2)
    monkeypatch.setattr(rank, "CANDIDATES_PER_K", 1)
    days = [("2025-11-01", "- kiwi one\n- kiwi two\n- plum\n"), ("2025-11-02", "- kiwi one\n- kiwi deux\n"),
            ("2025-11-03", "- plum\n"), ("2025-11-04", "- kiwi three\n- plum\n- kiwi four\n")]
    for day, text in days:
        repo.commit(day, date=day, files={"memory.md": text, f"memory/{day}.md": f"- kiwi log {day}\n"})
    ws = Workspace(repo.path)
    with Session(ws) as s:
        for i, (day, text) in enumerate(days):
            want = {line[2:] for line in text.splitlines() if "kiwi" in line}
            want |= {f"kiwi log {d}" for d, _ in days[: i + 1]}
            got = s.search("kiwi", Options(k=len(want), as_of=f"{day}T23:59:59+00:00")).results
            if scored_rows >= 100:
                assert {r.content for r in got} == want, day
            else:  # bounded plans score only the newest matches: a subset, never a leak
                assert {r.content for r in got} <= want and got, day
            assert all(r.status == "current" for r in got)


def test_fts_first_candidates_are_the_filtered_join_in_its_order(repo: GitRepo) -> None:
    # store.ranked reads FTS5's top rows and their chunk rows in one statement (a LEFT JOIN on the
    # filters): whatever it returns must be the exact filtered ranking, row for row and score for
    # score, also when the filter drops rows from the middle of FTS5's order (ended versions).
    from gitmem.index import store

    def lines(day: int) -> str:  # distinct lengths: no two bm25 scores tie
        return "".join(f"- kiwi {'pad ' * (i * 3 + day)}line {i} of day {day}\n\n" for i in range(6))

    for day in range(1, 5):
        repo.commit(f"day {day}", date=f"2025-11-0{day}", files={"memory.md": lines(day)})
    with Session(Workspace(repo.path)) as s:
        for f in (store.Filter(), store.Filter(at=2), store.Filter(history=True), store.Filter(kinds=("world",))):
            where, _ = f.compile()
            for limit in (1, 3, 6, 30):
                got = store.ranked(s.conn, '"kiwi"', where, limit, None, None)
                rows, scores = store._search_join(s.conn, "chunks", '"kiwi"', where, limit)
                assert [(r[store.ID], r[store.CONTENT], sc) for r, sc in got] == \
                    [(r["id"], r["content"], scores[r["id"]]) for r in rows], (f, limit)
        # The current version only: the first commits' lines were all replaced.
        where, _ = store.Filter().compile()
        assert {r[store.CONTENT] for r, _ in store.ranked(s.conn, '"kiwi"', where, 30, None, None)} == \
            {line[2:] for line in lines(4).splitlines() if line}


def test_a_session_reads_the_index_through_a_memory_map(repo: GitRepo) -> None:
    from gitmem.index.db import READ_MMAP_BYTES

    repo.commit("day", date="2025-11-03", files={"memory.md": "- kiwi\n"})
    with Session(Workspace(repo.path)) as s:
        assert s.conn.execute("PRAGMA mmap_size").fetchone()[0] == READ_MMAP_BYTES
        assert [r.content for r in s.search("kiwi", Options(k=3)).results] == ["kiwi"]


def test_a_rare_term_is_kept_when_common_terms_are_pruned(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.index import store

    monkeypatch.setattr(store, "SCORED_ROWS", 5)
    lines = "".join(f"- common word line {i}\n\n\n\n" for i in range(8)) + "- the rare zanzibar line\n"
    repo.commit("day", date="2025-11-03", files={"memory.md": lines})
    got = ask(repo, "common zanzibar", k=1)
    assert got == ["the rare zanzibar line"]


def test_the_last_match_by_bm25_still_wins_when_the_rerank_lifts_it(repo: GitRepo) -> None:
    # Guards any bound on what the rerank reads (wave 15: at 1M lines the pool's bm25 is flat,
    # the 600th score 0.90 of the 1st, and a quarter of the returned results rank 400th or
    # lower by bm25): the line bm25 puts last of every "zebra" line answers the whole question
    # ("stripes" is in most lines, so its weight is nil) and must come first; reading only the
    # head of the bm25 order would lose it.
    from gitmem.index import store

    gap = "\n" * 6  # beyond the neighbour credit's 4 lines
    zebras = [f"- zebra note {i} about the herd" for i in range(12)]
    target = "- a zebra with faint grey stripes by the gate"
    others = [f"- stripes on shirt {i}" for i in range(20)]
    repo.commit("day", date="2025-11-03", files={"memory.md": gap.join([*zebras, target, *others]) + "\n"})
    with Session(Workspace(repo.path)) as s:
        q = build("zebra stripes")
        by_bm25 = [row[store.CONTENT] for row, _ in s._candidates(q, store.Filter().compile()[0], 600, None)]
        assert [c for c in by_bm25 if "zebra" in c][-1] == target[2:]  # last of the zebra lines by bm25
        got = [r.content for r in s.search("zebra stripes", Options(k=3)).results]
    assert got[0] == target[2:]


def test_coverage_counts_stems_at_word_starts_only() -> None:
    from gitmem.recall.rank import covered as _covered

    assert _covered("rented an apartment downtown", {"part"}) == 0
    assert _covered("an apartment, then a part-time job", {"part"}) == 1
    assert _covered("(party) at noon", {"part", "noon", "tokyo"}) == 2
    assert _covered("x_party", {"part"}) == 1  # "_" separates words, as FTS5's tokenizer does



# -- cost-aware context and time words (issue 16; measured in bench/variants.py) -----------------

LONG_REPLY = ("assistant: " + " ".join(
    f"Here is general advice number {i} about planning, packing lists, budgets and schedules." for i in range(40)))


def results(repo: GitRepo, question: str, **kw: object) -> list[dict[str, object]]:
    with Session(Workspace(repo.path)) as s:
        return s.search(question, Options(**kw)).results  # type: ignore[arg-type]


def test_a_long_turn_that_matches_comes_back_as_an_excerpt_with_an_exact_citation(repo: GitRepo) -> None:
    reply = ("assistant: " + " ".join(f"Filler sentence {i} about nothing in particular." for i in range(30))
             + " The ferry to Naxos leaves at 7:40 from gate E2. "
             + " ".join(f"More filler {i} to pad the reply out." for i in range(30)))
    repo.commit("s1", date="2025-11-03", files={"memory/2025-11-03.md": (
        "# 2025-11-03\n\n- user: When does the boat leave?\n- " + reply + "\n")})
    got = results(repo, "When does the ferry to Naxos leave?", budget=400)
    hit = next(r for r in got if "Naxos" in str(r.content))
    text = str(hit.content)
    assert hit.excerpt is True
    assert "The ferry to Naxos leaves at 7:40 from gate E2." in text
    assert text.startswith("assistant: …") and text.endswith("…")
    assert len(text) < len(reply) // 3
    # The citation names the one line the whole reply is on, and every excerpted piece is in it.
    assert hit.source.startswith("memory/2025-11-03.md#L4@") and hit.lines == (4, 4)
    line = (repo.path / "memory/2025-11-03.md").read_text().splitlines()[3]
    for piece in text.removeprefix("assistant: ").split("…"):
        assert piece.strip() in line
    # Without a budget the whole text is returned (k results, nothing to save).
    whole = results(repo, "When does the ferry to Naxos leave?", k=5)
    assert any(r.content == reply and not r.excerpt for r in whole)


def test_last_week_boosts_a_fact_from_last_week_over_an_older_one(repo: GitRepo) -> None:
    repo.commit("old", date="2025-10-02", files={"memory/2025-10-02.md": (
        "# 2025-10-02\n\n- Tried a new ramen place downtown.\n")})
    repo.commit("recent", date="2025-11-19", files={"memory/2025-11-19.md": (
        "# 2025-11-19\n\n- Tried a new ramen place near the station.\n")})
    repo.commit("today", date="2025-11-26", files={"memory/2025-11-26.md": "# 2025-11-26\n\n- Quiet day.\n"})
    got = [r.content for r in results(repo, "Which ramen place did I try last week?", k=2, as_of="2025-11-26")]
    assert got[0] == "Tried a new ramen place near the station."
    # In October the October visit wins: the window follows the as-of point, and nothing is filtered out.
    got = [r.content for r in results(repo, "Which ramen place did I try in October?", k=2, as_of="2025-11-26")]
    assert got == ["Tried a new ramen place downtown.", "Tried a new ramen place near the station."]


def melanie_page_and_pottery_day(repo: GitRepo, written_as: str) -> None:
    """Melanie's entity page (aliases Mimi, Mel) and a day whose pottery line calls her `written_as`,
    behind a dozen unrelated notes and Jon's similar line."""
    repo.commit("page", date="2025-11-01", files={"bank/entities/Melanie.md": (
        "---\naliases: [Mimi, Mel]\n---\n\n# Melanie\n\n- Friend from the climbing gym.\n")})
    repo.commit("day", date="2025-11-03", files={"memory/2025-11-03.md": (
        "# 2025-11-03\n\n" + "".join(f"- Note {i} about the garden.\n\n\n\n\n" for i in range(12)) +
        "- Jon started a pottery class.\n\n\n\n\n"
        f"- {written_as} started a pottery class at the community centre downtown, on Thursday evenings.\n")})


def test_a_nickname_from_an_entity_page_finds_memory_that_uses_the_name(repo: GitRepo) -> None:
    melanie_page_and_pottery_day(repo, "Melanie")
    got = [c for c in ask(repo, "Which class did Mimi start?", k=5) if "pottery" in c]
    assert got[0].startswith("Melanie started")
    # The alias names no one else: Jon's line is still found, after hers.
    assert got[1] == "Jon started a pottery class."


def test_a_short_match_is_not_displaced_by_a_long_neighbour(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    # The long reply mentions "class" once in passing; it sits next to the line that asks the
    # question. Neighbour credit may lift it, but not past a short line that matches on its own.
    reply = "assistant: " + " ".join(f"Tip {i}: keep a sketchbook and practise daily." for i in range(40)) + " Enjoy the class."
    repo.commit("s1", date="2025-11-03", files={"memory/2025-11-03.md": (
        "# 2025-11-03\n\n" + "".join(f"- Note {i} about the garden.\n\n\n\n\n" for i in range(12))
        + "- user: When is my pottery class schedule changing?\n- " + reply + "\n")})
    repo.commit("s2", date="2025-11-05", files={"memory/2025-11-05.md": (
        "# 2025-11-05\n\n- user: The pottery teacher praised my bowl.\n")})
    question = "When is the pottery class schedule changing?"
    got = ask(repo, question, k=3)
    assert got[0] == "user: When is my pottery class schedule changing?"
    assert got[1] == "user: The pottery teacher praised my bowl."
    # Without the cost-aware credit the long reply rides in second on its neighbour's score.
    monkeypatch.setattr("gitmem.recall.rank.NEIGHBOUR_COST_POWER", 0.0)
    assert ask(repo, question, k=3)[1] == reply


def _homes() -> str:
    # Robert's line is the longest "lives" line: without his name in the question, bm25 puts it last.
    return ("# 2025-11-01\n\n## Retain\n"
            "- W @Anna: Lives in Berlin.\n- W @Jon: Lives in Oslo.\n- W @Mia: Lives in Rome.\n"
            "- W @Robert: Lives in Porto, in a small flat near the river, since the spring of 2021.\n")


def test_an_alias_bullet_lets_a_nickname_find_what_memory_says_under_the_full_name(repo: GitRepo) -> None:
    repo.commit("homes", date="2025-11-01", files={"memory/2025-11-01.md": _homes()})
    repo.commit("alias", date="2025-11-05", files={"memory/2025-11-05.md": (
        "# 2025-11-05\n\n## Retain\n- alias: @Robert = Bob, Bobby\n")})
    robert = "@Robert: Lives in Porto, in a small flat near the river, since the spring of 2021."

    def homes(question: str, **kw: object) -> list[str]:
        return [c for c in ask(repo, question, k=5, **kw) if "Lives in" in c]

    # The alias line itself is found too (it says who Bob is); among the homes, Robert's is first.
    assert homes("Where does Bob live?")[0] == robert
    # As of a day before the alias was written, memory did not know Bob is Robert: his home ranks last.
    assert homes("Where does Bob live?", as_of="2025-11-03")[-1] == robert
    # The other nickname of the same bullet works too, and the full name still does.
    assert homes("Where does Bobby live?")[0] == robert
    assert homes("Where does Robert live?")[0] == robert


def test_an_alias_bullet_lets_the_full_name_find_what_memory_says_under_the_nickname(repo: GitRepo) -> None:
    repo.commit("day", date="2025-11-01", files={"memory/2025-11-01.md": (
        "# 2025-11-01\n\n" + "".join(f"- @Anna{i} cooks soup on Mondays, with bread from the market.\n"
                                     for i in range(6))
        + "- Bob cooks paella on Sundays.\n\n## Retain\n- alias: @Robert = Bob\n")})
    got = ask(repo, "What does Robert cook?", k=2)
    assert "Bob cooks paella on Sundays." in got


def test_an_alias_line_outside_a_retain_section_expands_nothing(repo: GitRepo) -> None:
    repo.commit("homes", date="2025-11-01", files={"memory/2025-11-01.md": _homes()})
    repo.commit("note", date="2025-11-05", files={"memory/2025-11-05.md": (
        "# 2025-11-05\n\n## Notes\n\n- alias: @Robert = Bob\n")})
    got = [c for c in ask(repo, "Where does Bob live?", k=5) if "Lives in" in c]
    assert got[-1] == "@Robert: Lives in Porto, in a small flat near the river, since the spring of 2021."


def test_a_turn_spoken_by_the_person_asked_about_comes_first(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    # Melanie's turn repeats the question's words more often; the question is about Caroline, and
    # her own turn says what she started.
    repo.commit("s1", date="2025-11-03", files={"memory/2025-11-03.md": (
        "# 2025-11-03\n\n- Melanie: Caroline, a class! Which class did you start, Caroline?\n\n\n\n\n\n"
        "- Caroline: I started a pottery class on Thursdays.\n")})
    question = "What class did Caroline start?"
    assert ask(repo, question, k=2)[0] == "Caroline: I started a pottery class on Thursdays."
    monkeypatch.setattr("gitmem.recall.rank.SPEAKER_BOOST", 1.0)
    assert ask(repo, question, k=2)[0] == "Melanie: Caroline, a class! Which class did you start, Caroline?"


def test_a_name_finds_memory_that_uses_a_nickname_from_the_entity_page(repo: GitRepo) -> None:
    melanie_page_and_pottery_day(repo, "Mimi")
    got = [c for c in ask(repo, "Which class did Melanie start?", k=5) if "pottery" in c]
    assert got[0] == "Mimi started a pottery class at the community centre downtown, on Thursday evenings."


def test_common_words_of_a_question_find_the_answer_when_its_rare_word_is_elsewhere(repo: GitRepo,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The scale failure in miniature (bench/scale.py): the question's rarest word ("lease") fills
    # most of the scored rows on its own and is not in the answer; the answer holds the two common
    # words, which match too many rows to be scored one by one. Rows holding both must be scored.
    from gitmem.index import store

    monkeypatch.setattr(store, "SCORED_ROWS", 6)
    lines = ["the car lease ends in spring", "lease paperwork for the office", "a lease on the storage unit",
             *(f"photos of the Lisbon trip, album {i}" for i in range(4)),
             *(f"an apartment viewing in Porto, number {i}" for i in range(4)),
             *(f"groceries for week {i}" for i in range(30)), "we picked the Lisbon apartment with the blue door"]
    repo.commit("day", date="2025-11-03", files={"memory.md": "".join(f"- {line}\n\n\n\n" for line in lines)})
    assert ask(repo, "Lisbon apartment lease", k=1) == ["we picked the Lisbon apartment with the blue door"]
