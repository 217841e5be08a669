"""Hybrid recall leaves the dense hits far below a top-k answer unread (semantic.hybrid with
`reach`), and the answer is the one reading every hit gives; when an unread hit could have
reached it, recall reads them all and answers again. Real repository, real index, the real
embedding model."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("onnxruntime", reason="semantic recall needs the embed extra (bash .ci/setup installs it)")

from gitrepo import GitRepo  # noqa: E402

from gitmem.index.indexer import update  # noqa: E402
from gitmem.recall import currency, semantic  # noqa: E402
from gitmem.recall import search as search_mod  # noqa: E402
from gitmem.recall.search import Options, Session  # noqa: E402
from gitmem.workspace import Workspace  # noqa: E402

HOBBY = "I go rock climbing and kayaking on most weekends."
TOPICS = ["the quarterly tax report", "the corner shop's flour", "the dentist appointment", "the car insurance",
          "the garden fence", "the office printer", "the train timetable", "the library books", "the boiler service",
          "the team offsite agenda", "the phone contract", "the bike repair", "the school forms", "the roof gutter",
          "the bank transfer"]
QUESTION = "which outdoor sports do I enjoy?"  # shares no word with HOBBY


@pytest.fixture(scope="module")
def embedder() -> semantic.Embedder:
    return semantic.load_embedder()


@pytest.fixture
def repo(tmp_path: Any) -> GitRepo:
    lines = [f"Note {i}: followed up on {TOPICS[i % len(TOPICS)]} ({i // len(TOPICS)} times so far)." for i in range(150)]
    lines.insert(70, HOBBY)
    repo = GitRepo.init(tmp_path / "ws")
    repo.commit("log", "2025-11-01", {"memory/2025-11-01.md": "# Log\n\n" + "\n\n".join(f"- {t}" for t in lines) + "\n"})
    w = Workspace(repo.path)
    update(w)
    assert semantic.fill_vectors(w).left == 0
    return repo


def answer(repo: GitRepo, embedder: semantic.Embedder, q: str, **kw: Any) -> list[tuple[Any, ...]]:
    with Session(Workspace(repo.path), dense=semantic.InProcess(embedder)) as s:
        return [(r.source, r.content, r.score) for r in s.search(q, Options(semantic=True, **kw)).results]


def test_unread_hits_change_nothing(repo: GitRepo, embedder: semantic.Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int | None, int]] = []
    real = semantic.hybrid

    def spy(*a: Any, **kw: Any) -> Any:
        out = real(*a, **kw)
        calls.append((kw.get("reach"), len(out[2].ids)))
        return out

    monkeypatch.setattr(semantic, "hybrid", spy)
    questions = [QUESTION, "what happened with the dentist appointment", "bank transfer"]
    head = {q: answer(repo, embedder, q, k=10) for q in questions}
    assert [c[0] for c in calls] == [64] * 3 and all(n >= 30 for _, n in calls)  # of 151 hits; one call each
    assert head[QUESTION][0][1] == HOBBY  # meaning finds what words miss
    assert "dentist appointment" in head[questions[1]][0][1]
    # Every hit read (no reach: as a budget does), the same answers, scores and all.
    monkeypatch.setattr(search_mod, "_reach", lambda opts: None)
    calls.clear()
    assert {q: answer(repo, embedder, q, k=10) for q in questions} == head
    assert calls == [(None, 0)] * 3


def test_an_unread_hit_that_could_reach_the_answer_means_reading_all(
        repo: GitRepo, embedder: semantic.Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    before = answer(repo, embedder, QUESTION, k=10)
    calls: list[int | None] = []
    real = semantic.hybrid

    def spy(*a: Any, **kw: Any) -> Any:
        calls.append(kw.get("reach"))
        return real(*a, **kw)

    monkeypatch.setattr(semantic, "hybrid", spy)
    # No dense hit seems worth reading, so they all are left out: their bound beats the settled
    # places, and recall fuses again with every hit read.
    monkeypatch.setattr(currency, "worst_case", lambda score: float("inf"))
    assert answer(repo, embedder, QUESTION, k=10) == before
    assert calls == [64, None]
