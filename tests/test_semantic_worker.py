"""The dense side's kept thread (semantic.Worker) and the collector settings of a process that
holds the model (semantic.steady_collector): speed work (bench/RESULTS.md "Recall latency, wave
11") that must not change what a question gets back, lose an error, or make two questions asked
at once wait for each other."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

import pytest

pytest.importorskip("onnxruntime", reason="semantic recall needs the embed extra (bash .ci/setup installs it)")

from gitmem.index.indexer import update  # noqa: E402
from gitmem.index.vectors import Hits  # noqa: E402
from gitmem.recall import semantic  # noqa: E402
from gitmem.recall.search import Options, Session  # noqa: E402
from gitmem.workspace import Workspace  # noqa: E402
from gitrepo import GitRepo  # noqa: E402


def hits(n: int) -> Hits:
    return Hits([n], [0.5], 0, 1)


def test_a_kept_thread_answers_one_question_after_another() -> None:
    worker = semantic.Worker()
    ran: list[int] = []

    def fn(n: int) -> Any:
        def go() -> Hits:
            ran.append(threading.get_ident())
            return hits(n)
        return go

    got = [semantic.in_thread(fn(n), None, worker)() for n in range(5)]
    assert [h.ids for h in got] == [[0], [1], [2], [3], [4]]
    assert len(set(ran)) == 1 and ran[0] != threading.get_ident()
    assert worker.thread is not None and ran[0] == worker.thread.ident


def test_a_busy_worker_hands_the_next_question_its_own_thread() -> None:
    worker = semantic.Worker()
    release = threading.Event()
    where: dict[str, int] = {}

    def slow() -> Hits:
        where["slow"] = threading.get_ident()
        assert release.wait(30)
        return hits(1)

    def quick() -> Hits:
        where["quick"] = threading.get_ident()
        return hits(2)

    first = semantic.in_thread(slow, None, worker)
    # The second question is answered while the first still holds the kept thread: not queued behind it.
    assert semantic.in_thread(quick, None, worker)().ids == [2]
    release.set()
    assert first().ids == [1]
    assert where["slow"] != where["quick"]
    # Free again: the next question is the kept thread's.
    semantic.in_thread(quick, None, worker)()
    assert where["quick"] == where["slow"]


def test_an_error_reaches_the_waiting_caller_and_the_thread_goes_on() -> None:
    worker = semantic.Worker()

    def fails() -> Hits:
        raise semantic.Unavailable("the model is gone", "install it")

    with pytest.raises(semantic.Unavailable, match="the model is gone"):
        semantic.in_thread(fails, None, worker)()
    assert semantic.in_thread(lambda: hits(3), None, worker)().ids == [3]


def test_the_helper_runs_before_the_wait() -> None:
    order: list[str] = []
    started = threading.Event()

    def fn() -> Hits:
        assert started.wait(30)
        order.append("fn")
        return hits(4)

    def helper() -> None:
        order.append("helper")
        started.set()

    assert semantic.in_thread(fn, helper, semantic.Worker())().ids == [4]
    assert order == ["helper", "fn"]


class Counting:
    """The real model, noting which thread embeds each question."""

    def __init__(self, real: semantic.Embedder) -> None:
        self.real = real
        self.threads: list[int] = []

    def embed(self, texts: list[str]) -> Any:
        self.threads.append(threading.get_ident())
        return self.real.embed(texts)


def test_in_process_questions_share_one_thread_and_answer_as_before(repo: GitRepo) -> None:
    repo.write("memory/2025-11-20.md", "# Log\n\n- I go rock climbing and kayaking on most weekends.\n\n"
                                       "- The dentist appointment moved to Thursday at 9.\n")
    repo.commit("log", date="2025-11-20")
    ws = Workspace(repo.path)
    update(ws)
    semantic.fill_vectors(ws)
    emb = Counting(semantic.load_embedder())
    with Session(ws, dense=semantic.InProcess(emb)) as s:
        first = [r.content for r in s.search("which outdoor sports do I enjoy?", Options(k=2, semantic=True)).results]
        second = [r.content for r in s.search("which outdoor sports do I enjoy?", Options(k=2, semantic=True)).results]
    assert first[0] == "I go rock climbing and kayaking on most weekends."
    assert second == first
    assert len(emb.threads) == 2 and emb.threads[0] == emb.threads[1] != threading.get_ident()


def test_the_collector_is_set_once_for_many_questions() -> None:
    # In a process of its own: the settings are the whole process's.
    code = ("import gc; from gitmem.recall import semantic as s; young = gc.get_threshold()[0];"
            "s.steady_collector(); a = (gc.get_threshold()[0], gc.get_freeze_count());"
            "gc.set_threshold(900); s.steady_collector(); print(young, *a, gc.get_threshold()[0])")
    young, after, frozen, again = map(int, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                          check=True).stdout.split())
    assert young == 700 and after == semantic.YOUNG_THRESHOLD and frozen > 1000
    assert again == 900  # once per process: a later setting of the process's own is left alone
    off = ("import gc; gc.disable(); gc.set_threshold(0); from gitmem.recall import semantic as s;"
           "s.steady_collector(); print(gc.get_threshold()[0])")
    assert subprocess.run([sys.executable, "-c", off], capture_output=True, text=True, check=True).stdout.strip() == "0"


def test_the_kept_thread_ends_with_its_worker() -> None:
    worker = semantic.Worker()
    assert semantic.in_thread(lambda: hits(5), None, worker)().ids == [5]
    thread = worker.thread
    assert thread is not None and thread.is_alive()
    del worker
    thread.join(30)
    assert not thread.is_alive()
