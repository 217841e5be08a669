"""bench/scale.py's memory: labelled conversations among filler in one workspace, on a real repo
and index built from small made-up LoCoMo and oracle records (the real files are not read here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import scale  # noqa: E402
from benchlib import Floor, covered  # noqa: E402
from test_bench_suites import oracle_record  # noqa: E402


def locomo_record() -> dict[str, Any]:
    conv = {"speaker_a": "Caroline", "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to the LGBTQ support group yesterday."},
                          {"speaker": "Melanie", "dia_id": "D1:2", "text": "I painted a lake sunrise last year."}],
            "session_2_date_time": "10:00 am on 2 June, 2023",
            "session_2": [{"speaker": "Melanie", "dia_id": "D2:1", "text": "We went camping at the beach."}]}
    return {"sample_id": "conv-x", "conversation": conv,
            "qa": [{"question": "What did Melanie paint?", "evidence": ["D1:2"], "category": 4},
                   {"question": "Where did Melanie camp?", "evidence": ["D2:1", "D9:9"], "category": 4}]}


def oracle() -> list[dict[str, Any]]:
    return [oracle_record("q1", [("s1", "2023/05/20 (Sat) 09:00", [
        ("My personal best in the 5K is now 25:50.", True),
        ("I also enjoy baking sourdough bread on weekends. The crust is the best part of it.", False),
        ("Gardening keeps me calm in the evenings after work.", False)])])]


def commits(root: Path) -> int:
    return int(subprocess.run(["git", "-C", str(root), "rev-list", "--count", "HEAD"], capture_output=True, text=True,
                              check=True).stdout)


def show(root: Path, path: str) -> list[str]:
    return subprocess.run(["git", "-C", str(root), "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True).stdout.splitlines()


def test_filler_never_copies_an_answer_and_speaks_with_the_conversations_names() -> None:
    sentences = scale.filler_sentences(oracle())
    assert "I also enjoy baking sourdough bread on weekends." in sentences
    assert "Gardening keeps me calm in the evenings after work." in sentences
    assert not [s for s in sentences if "25:50" in s]  # a has_answer turn's sentence
    sessions, is_filler, _ = scale.plan([locomo_record()], oracle(), 3000, seed=3, shared=True)
    assert sum(len(t) for _, _, t in sessions) == 3000
    said = [text for (_, _, turns), f in zip(sessions, is_filler) if f for _, text in turns]
    assert any(t.startswith("Melanie: ") for t in said) and not any("25:50" in t for t in said)
    others, other_filler, _ = scale.plan([locomo_record()], oracle(), 3000, seed=3, shared=False)
    said = [text for (_, _, turns), f in zip(others, other_filler) if f for _, text in turns]
    assert said and not any(t.startswith(("Melanie: ", "Caroline: ")) for t in said)
    assert [w for w, _, _ in sessions] == sorted(w for w, _, _ in sessions)
    again, _, _ = scale.plan([locomo_record()], oracle(), 3000, seed=3, shared=True)
    assert again == sessions


def test_the_memory_holds_every_turn_where_the_questions_look_and_a_filler_day_is_one_commit(tmp_path: Path) -> None:
    # Filler over 40 days only, so that days hold several filler chats.
    sessions, is_filler, _ = scale.plan([locomo_record()], oracle(), 600, seed=3, shared=True, days=40)
    mem = scale.build([locomo_record()], oracle(), 600, seed=3, cache=tmp_path, days=40)
    root = mem.built.root
    assert mem.lines == 600 and root.parent == tmp_path
    for tid, (path, line) in mem.built.lines.items():
        assert show(root, path)[line - 1] == f"- {mem.built.texts[tid]}"
    # One commit per labelled session, one per run of filler sessions on one day.
    runs = sum(1 for i, f in enumerate(is_filler)
               if not (f and i and is_filler[i - 1] and sessions[i][0].date() == sessions[i - 1][0].date()))
    assert commits(root) == runs < len(sessions)
    # The questions: LoCoMo's evidence in its conversation (the malformed id dropped), the oracle's
    # has_answer turn, asked as of the question's day.
    by_text = {q.text: q for q in mem.questions}
    paint = by_text["What did Melanie paint?"]
    assert (paint.source, paint.part, paint.as_of) == ("locomo", "tune", None)
    assert [show(root, p)[n - 1] for p, n in paint.evidence] == ["- Melanie: I painted a lake sunrise last year."]
    assert len(by_text["Where did Melanie camp?"].evidence) == 1
    best = by_text["What is my personal best?"]
    assert best.as_of == "2023-06-01" and best.group == "knowledge-update"
    assert [show(root, p)[n - 1] for p, n in best.evidence] == ["- user: My personal best in the 5K is now 25:50."]
    # The dated floor sees a turn only from its day on.
    floor = Floor(mem.built, dated=True)
    assert covered(floor.ask("Melanie camping beach", k=50, upto="2023-06-02"), by_text["Where did Melanie camp?"].evidence[0])
    assert not covered(floor.ask("Melanie camping beach", k=50, upto="2023-06-01"), by_text["Where did Melanie camp?"].evidence[0])
    floor.close()
    # Built again: the cached history is reused, not rewritten; the run scores both sets.
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout
    again = scale.build([locomo_record()], oracle(), 600, seed=3, cache=tmp_path, days=40)
    assert again.built.root == root
    assert subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout == head
    r = scale.run(mem, ["shipped", "scored1500"], 0)
    assert r["n"] == 3 and r["tally"].get("shipped 1000", ("locomo", "tune", "4")) == 1.0
    assert r["tally"].n("floor 2000", ("lme", "all", "all")) == 1
