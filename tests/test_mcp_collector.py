"""`gitmem mcp`'s recall sessions (mcp_server.open_session): a long-lived process answering many
questions sets its collector once for them, for lexical questions too (speed work, bench/RESULTS.md
"Recall latency, wave 12"), and answers exactly as a plain Session does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.recall import semantic
from gitmem.recall.search import Options, Session
from gitmem.workspace import Workspace
from gitrepo import sealed_demo


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sealed_demo(tmp_path_factory, "mcp-collector").root


# Run in a process of its own: the collector's settings are the whole process's.
_PROBE = """
import gc, json, sys
from gitmem import mcp_server
from gitmem.recall.search import Options
from gitmem.workspace import Workspace
before = [gc.get_threshold()[0], gc.get_freeze_count()]
answers = []
for _ in range(2):  # two tool calls, each with its own session
    with mcp_server.open_session(Workspace(sys.argv[1]), []) as s:
        answers.append([r.content for r in s.search(sys.argv[2], Options(k=3)).results])
    answers.append(gc.get_threshold()[0])
print(json.dumps({"before": before, "frozen": gc.get_freeze_count(), "answers": answers,
                  "model": "onnxruntime" in sys.modules}))
"""


def test_a_lexical_tool_call_sets_the_collector_for_many_questions_and_answers_as_before(ws: Path) -> None:
    question = "where does Peter live"
    out = json.loads(subprocess.run([sys.executable, "-c", _PROBE, str(ws), question], capture_output=True, text=True,
                                    check=True).stdout)
    with Session(Workspace(ws)) as s:
        plain = [r.content for r in s.search(question, Options(k=3)).results]
    assert plain and any("Peter" in c for c in plain)
    young, frozen = out["before"]
    assert young == 700 and frozen == 0  # the interpreter's settings until the first session
    first, after_first, second, after_second = out["answers"]
    assert first == second == plain
    assert after_first == after_second == semantic.YOUNG_THRESHOLD
    assert out["frozen"] > 1000  # what the read path loaded is out of the collector's walks
    assert not out["model"]  # a lexical question loads no model
