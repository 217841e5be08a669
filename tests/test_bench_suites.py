"""The recall benchmarks' own machinery: the current-truth scenarios (data that later ranking tests
reuse), the haystack's distractor draw and the knowledge-update rule, on real repos and small
made-up oracle records (the real LongMemEval file is not read here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import current_truth as ct  # noqa: E402
import haystack as hs  # noqa: E402
import knowledge_update as ku  # noqa: E402
from benchlib import covered, half  # noqa: E402
from gm import Result, line_result  # noqa: E402
from gitrepo import seal_git_env  # noqa: E402


def show(root: Path, rev: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(root), "show", f"{rev}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def rev_before(root: Path, day: str) -> str:
    return subprocess.run(["git", "-C", str(root), "rev-list", "-1", f"--before={day}T23:59:59Z", "main"],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def scenarios() -> list[ct.Scenario]:
    return ct.load()


@pytest.fixture(scope="module")
def ct_root(scenarios: list[ct.Scenario], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scenarios' workspace, built once (under its own sealed git environment: module
    fixtures run before the function-scoped sealing)."""
    with pytest.MonkeyPatch.context() as mp:
        seal_git_env(mp, tmp_path_factory.mktemp("ct-home"))
        return ct.build(scenarios, tmp_path_factory.mktemp("ct") / "ws")


def test_every_scenario_marker_names_one_fact_that_exists_when_asked(scenarios: list[ct.Scenario],
                                                                     ct_root: Path) -> None:
    check_markers(scenarios, ct_root)


def check_markers(scenarios: list[ct.Scenario], root: Path) -> None:
    # The suite is only as good as its data: each question's current substring must be in memory
    # at the question's date, each stale one must have been written by then (it may have been
    # edited away since: the in-place control), and no line may hold both.
    for s in scenarios:
        for q in s.questions:
            rev = rev_before(root, q.as_of)
            files = subprocess.run(["git", "-C", str(root), "ls-tree", "-r", "--name-only", rev],
                                   capture_output=True, text=True, check=True).stdout.split()
            lines = [ln for f in files if f.endswith(".md") for ln in show(root, rev, f).splitlines()]
            written = subprocess.run(["git", "-C", str(root), "log", "-p", "--format=", rev], capture_output=True,
                                     text=True, check=True).stdout.lower()
            assert [ln for ln in lines if q.current.lower() in ln.lower()], \
                f"{s.name}: {q.current!r} is not in memory as of {q.as_of}"
            for stale in q.stale:
                assert f"{stale.lower()}" in written, f"{s.name}: {stale!r} was never written by {q.as_of}"
                both = [ln for ln in lines if stale.lower() in ln.lower() and q.current.lower() in ln.lower()
                        and "gitmem:" not in ln and not ln.startswith("#")]
                assert not both, f"{s.name}: a line holds both the current and a stale marker: {both}"


def test_history_commits_in_date_order_and_shares_files_between_scenarios(scenarios: list[ct.Scenario]) -> None:
    commits = ct.history(scenarios)
    whens = [w for w, _, _ in commits]
    assert whens == sorted(whens)
    assert len(commits) == sum(len(s.entries) for s in scenarios)
    last_memory = [f["memory.md"] for _, _, f in commits if "memory.md" in f][-1]
    # Ben's block was edited in place (Leeds -> Bristol) and Nora's block sits beside it.
    assert "Bristol" in last_memory and "Leeds" not in last_memory and "900123" in last_memory


def test_current_truth_scores_todays_recall_and_tells_current_from_stale(scenarios: list[ct.Scenario],
                                                                        ct_root: Path) -> None:
    rep = ct.evaluate(scenarios, ct_root)
    assert len(rep.gitmem) == sum(len(s.questions) for s in scenarios) == len(rep.floor)
    by = {(o.scenario, o.question.as_of): o for o in rep.gitmem}
    # The in-place memory.md edit is the one case the index already gets right: the old line's
    # version is closed, so "Leeds" cannot be returned as of April.
    assert by["move-in-memory-md", "2025-04-01"].top1_current
    # Before the move, the old home is the current truth (as-of is exact).
    assert by["move-across-logs", "2025-02-01"].top1_current
    assert rep.keep_total == sum(len(s.keep) for s in scenarios) and not rep.keep_false


def test_heldout_half_is_sound_and_no_kept_fact_is_superseded(tmp_path_factory: pytest.TempPathFactory) -> None:
    # The held-out half (written before the rule ran on it): its markers hold, and the precision
    # the supersession rule reached on it stays: none of its 49 must-not-supersede facts is marked
    # superseded or hidden.
    held = ct.load(ct.HELDOUT)
    with pytest.MonkeyPatch.context() as mp:
        seal_git_env(mp, tmp_path_factory.mktemp("held-home"))
        root = ct.build(held, tmp_path_factory.mktemp("held") / "ws")
    check_markers(held, root)
    rep = ct.evaluate(held, root)
    assert (len(rep.gitmem), rep.keep_total) == (26, 49)
    assert rep.keep_false == []
    assert sum(len(s.keep) for s in held if s.kind.startswith("keep-")) >= 40


def test_judge_counts_a_stale_top_fact_as_a_miss() -> None:
    q = ct.Question("Where does Alice live?", "Alice", "2025-04-01", "Madrid", ("Porto",))
    s = ct.Scenario("t", "move", (), (q,))

    def said(text: str) -> Result:
        return line_result("memory/2025-03-01.md", 1, "2025-03-01", text)._replace(entities=("alice",))

    stale_first = [said("@Alice: Lives in Porto."), said("@Alice: Moved to Madrid."),
                   said("- 2025-03-01: @Alice moved to Madrid. (bank/x.md#L3@1234567)")]
    o = ct.judge(q, s, stale_first)
    assert not o.top1_current and o.stale_above and o.copies
    o = ct.judge(q, s, stale_first[1:2] + stale_first[:1])
    assert o.top1_current and not o.stale_above and not o.copies


def oracle_record(qid: str, sessions: list[tuple[str, str, list[tuple[str, bool]]]], qtype: str = "knowledge-update",
                  date: str = "2023/06/01 (Thu) 10:00") -> dict[str, Any]:
    return {"question_id": qid, "question_type": qtype, "question": "What is my personal best?",
            "question_date": date,
            "haystack_session_ids": [sid for sid, _, _ in sessions],
            "haystack_dates": [d for _, d, _ in sessions],
            "haystack_sessions": [[{"role": "user", "content": text, "has_answer": flag} for text, flag in turns]
                                  for _, _, turns in sessions],
            "answer_session_ids": [sid for sid, _, _ in sessions]}


def small_oracle() -> list[dict[str, Any]]:
    data = [oracle_record("q1", [
        ("q1_2", "2023/05/27 (Sat) 10:20", [("My personal best in the 5K is now 25:50.", True), ("Thanks!", False)]),
        ("q1_1", "2023/05/25 (Thu) 20:21", [("I set a personal best of 27:12 in the 5K.", True)]),
    ])]
    data.append(oracle_record("q1_abs", [("q1_1", "2023/05/25 (Thu) 20:21", [("I set a personal best of 27:12.", True)]),
                                         ("twin", "2023/05/26 (Fri) 20:21", [("Twin session text.", False)])]))
    for i in range(2, 12):
        data.append(oracle_record(f"q{i}", [(f"s{i}", f"2023/0{1 + i % 5}/1{i % 9} (Mon) 08:00",
                                             [(f"Distractor talk number {i} about gardening.", False)])], "single-session-user"))
    return data


def test_haystack_draw_is_seeded_excludes_the_question_and_its_twin_and_stays_before_the_question() -> None:
    data = small_oracle()
    pool = hs.session_pool(data)
    a = hs.plan(data[0], pool, 5, seed=16)
    b = hs.plan(data[0], pool, 5, seed=16)
    c = hs.plan(data[0], pool, 5, seed=17)
    assert [(w, s.sid) for w, s, _ in a] == [(w, s.sid) for w, s, _ in b]
    assert [(w, s.sid) for w, s, _ in a] != [(w, s.sid) for w, s, _ in c]
    distractors = [(w, s) for w, s, own in a if not own]
    assert len(distractors) == 5
    assert not {s.sid for _, s in distractors} & {"q1_1", "q1_2", "twin"}  # own, and the _abs twin's
    asked = hs.lme_time(data[0]["question_date"]).replace(hour=0, minute=0)
    assert all(w < asked for w, _ in distractors)
    assert [w for w, _, _ in a] == sorted(w for w, _, _ in a)


def test_haystack_workspace_holds_every_turn_where_the_bench_looks_and_the_update_rule(tmp_path: Path) -> None:
    data = small_oracle()
    h = hs.build(data[0], hs.session_pool(data), n=4, root=tmp_path / "hay")
    assert len({hs.session_of(t) for t in h.built.lines}) == 6
    for tid, (path, line) in h.built.lines.items():
        assert show(h.built.root, "HEAD", path).splitlines()[line - 1] == f"- {h.built.texts[tid]}"
    # has_answer turns in date order; the latest answer session holds the update.
    updated, outdated = ku.split_turns(h)
    assert [h.built.texts[t] for t in updated] == ["user: My personal best in the 5K is now 25:50."]
    assert [h.built.texts[t] for t in outdated] == ["user: I set a personal best of 27:12 in the 5K."]
    from gm import Asker

    with Asker(h.built.root) as asker:
        res = asker.ask("personal best 5K", as_of=h.day, k=10)
    assert covered(res, h.built.lines[updated[0]]) and covered(res, h.built.lines[outdated[0]])
    # Built again with the same inputs: the cached repository is reused, not rewritten.
    head = subprocess.run(["git", "-C", str(h.built.root), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout
    again = hs.build(data[0], hs.session_pool(data), n=4, root=tmp_path / "hay")
    assert subprocess.run(["git", "-C", str(again.built.root), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout == head


def test_split_halves_are_stable_and_both_used() -> None:
    ids = [f"q{i}" for i in range(200)]
    parts = [half(i) for i in ids]
    assert parts == [half(i) for i in ids]
    assert 60 < parts.count("tune") < 140
