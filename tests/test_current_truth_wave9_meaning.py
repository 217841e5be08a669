"""Issue 13, wave 9: meaning in currency (gitmem/recall/meaning.py). With hybrid recall, a newer
statement of one subject that the sentence vectors say answers the same question as an older one goes
first, whatever words either uses; the words-only rules stay as they were (no vectors: nothing changes).
Real git repositories, real index, the real bundled embedder (the embed extra); each test runs with the
rule off (MEANING_SLOT) to show it is what decides, and the traps keep the older line first: a sum of
money for another thing, and a change that takes effect from a month after the day asked. The sentences
are not any bench set's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime", reason="semantic recall needs the embed extra (bash .ci/setup installs it)")

from test_current_truth_wave7 import history, nothing_hidden  # noqa: E402

from gitmem.parse.dates import starts  # noqa: E402
from gitmem.recall import currency, meaning, semantic, warm  # noqa: E402
from gitmem.recall.result import Result  # noqa: E402
from gitmem.recall.search import Options, Session  # noqa: E402
from gitmem.workspace import Workspace  # noqa: E402
from gitrepo import GitRepo  # noqa: E402


@pytest.fixture(scope="module")
def embedder() -> semantic.Embedder:
    return semantic.load_embedder()


def ask(repo: GitRepo, embedder: semantic.Embedder, q: str, as_of: str, hybrid: bool = True) -> list[Result]:
    with Session(Workspace(repo.path), dense=semantic.InProcess(embedder)) as s:
        return s.search(q, Options(k=10, as_of=as_of, semantic=hybrid)).results


def top(results: list[Result], entity: str) -> str:
    return next(str(r.content) for r in results if entity in r.entities)


def embedded(repo: GitRepo) -> GitRepo:
    semantic.fill_vectors(Workspace(repo.path))
    return repo


def test_a_change_in_new_words_goes_first_by_meaning(tmp_path: Path, embedder: semantic.Embedder,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # "Up to 70 kg" holds no word of the question ("weigh" is the older line's only), so no rule of
    # words ties the two lines; their vectors do.
    repo = embedded(history(
        tmp_path,
        ("2026-01-20", ("W @Henrike: Weighs 64 kg.", "W @Henrike: Sings alto in a gospel choir.")),
        ("2026-04-11", ("W @Henrike: Up to 70 kg after the winter off the bike.",)),
    ))
    q = "How much does Henrike weigh?"
    results = ask(repo, embedder, q, "2026-05-01")
    assert "70 kg" in top(results, "henrike")
    assert nothing_hidden(results)  # ranking only: the older line is still there, unmarked
    assert any("Weighs 64 kg" in r.content for r in results)
    assert "Weighs 64 kg" in top(ask(repo, embedder, q, "2026-03-01"), "henrike")  # before the change
    # Wave 20: "Up to 70 kg" is a value told as reached (currency._told_anew): words alone put it first
    # too. With that rule off, words alone (no dense side asked for), and hybrid recall with the
    # meaning rule off too: the older line first.
    assert "70 kg" in top(ask(repo, embedder, q, "2026-05-01", hybrid=False), "henrike")
    monkeypatch.setattr(currency, "VALUE_ANEW", False)
    assert "Weighs 64 kg" in top(ask(repo, embedder, q, "2026-05-01", hybrid=False), "henrike")
    monkeypatch.setattr(meaning, "MEANING_SLOT", False)
    assert "Weighs 64 kg" in top(ask(repo, embedder, q, "2026-05-01"), "henrike")


def test_a_sum_for_another_thing_never_passes_by_meaning(tmp_path: Path, embedder: semantic.Embedder,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = embedded(history(
        tmp_path,
        ("2026-01-09", ("W @Clement: Pays 900 euros a month for his flat in Nantes.",
                        "W @Clement: Plays the tuba in a brass band.")),
        ("2026-03-15", ("W @Clement: Spends about 90 euros a month on petrol.",)),
    ))
    q = "How much rent does Clement pay?"
    assert "900 euros" in top(ask(repo, embedder, q, "2026-04-01"), "clement")
    # The vectors alone would take the petrol for the rent: the guard is what keeps the flat first.
    monkeypatch.setattr(meaning, "AMOUNTS_APART", False)
    assert "petrol" in top(ask(repo, embedder, q, "2026-04-01"), "clement")


def test_a_change_from_a_month_ahead_is_a_plan_until_then(tmp_path: Path, embedder: semantic.Embedder,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert starts("On a four-day week from July, Fridays off.", date(2026, 5, 10)) == date(2026, 7, 1)
    assert starts("Starting in January with the night shift.", date(2026, 11, 3)) == date(2027, 1, 1)
    assert starts("Moved from Leeds to York.", date(2026, 5, 10)) is None
    assert starts("Back from Mayo on the early train.", date(2026, 5, 10)) is None
    assert starts("The rent is 700 from May.", date(2026, 5, 10)) is None  # its own month: already on
    repo = embedded(history(
        tmp_path,
        ("2026-02-03", ("W @Oskar: Works Monday to Friday at the port authority office.",
                        "W @Oskar: Walks his two beagles at dawn.")),
        ("2026-05-10", ("W @Oskar: On a four-day week from July, Fridays off; the port authority approved his request.",)),
    ))
    q = "Which days does Oskar work?"
    assert "Monday to Friday" in top(ask(repo, embedder, q, "2026-06-01"), "oskar")  # asked in June: a plan
    assert "four-day week" in top(ask(repo, embedder, q, "2026-07-15"), "oskar")  # from July: the days now
    # Without the start read (currency.takes_effect_after: meaning's test and the word rules'
    # pending changes both read it), meaning alone would put the plan first in June.
    monkeypatch.setattr(currency, "starts", lambda text, written: None)
    assert "four-day week" in top(ask(repo, embedder, q, "2026-06-01"), "oskar")
    monkeypatch.setattr(meaning, "MEANING_SLOT", False)
    assert "Monday to Friday" in top(ask(repo, embedder, q, "2026-07-15"), "oskar")


def test_the_cli_gets_the_question_vector_from_the_warm_embedder(tmp_path: Path) -> None:
    """`gitmem recall` asks the warm embedder process for the dense side: its answer carries the
    question's vector, so the CLI decides by meaning as `gitmem mcp` does in-process. (Wave 20: the
    newer line tells no value as reached, "up to 70 kg" would be put first by words alone.)"""
    repo = embedded(history(
        tmp_path,
        ("2026-01-20", ("W @Henrike: Weighs 64 kg.", "W @Henrike: Sings alto in a gospel choir.")),
        ("2026-04-11", ("W @Henrike: At 70 kg after the winter off the bike, up from 64.",)),
    ))
    env = {**os.environ, "GITMEM_EMBED_IDLE": "60"}
    try:
        out = []
        for flag in ("--semantic", "--no-semantic"):
            proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo.path), "recall", "--json", flag,
                                   "--as-of", "2026-05-01", "How much does Henrike weigh?"],
                                  capture_output=True, text=True, env=env, timeout=300)
            assert proc.returncode == 0, proc.stderr
            data = json.loads(proc.stdout)
            out.append(next(r["content"] for r in data["results"] if "henrike" in r["entities"]))
        assert "70 kg" in out[0] and "Weighs 64 kg" in out[1]
    finally:
        warm.stop(Workspace(repo.path))
